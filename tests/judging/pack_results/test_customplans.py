"""The CustomPlans results page's numbers (judging.pack_results.customplans.tables), by hand
from the demo's worked examples (demo/fixtures/pack_results/customplans-*.jsonl: Figure 13's
nine hints, two systems, three raters each; the outcomes are listed in the docstrings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judging.pack_results.common import Bootstrap
from judging.pack_results.customplans.tables import NOT_RECORDED, build, item_instances

FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "pack_results"
BOOT = Bootstrap(n_resamples=400, seed=0)


def annotations(system: str) -> list[dict]:
    out = []
    for line in (FIXTURES / f"customplans-{system}-worked-example.jsonl").read_text().splitlines():
        rec = json.loads(line)
        for rating in rec["ratings"]:
            out.append(
                {
                    "generator": system,
                    "item": rec["id"],
                    **{q: [a] if isinstance(a, str) else a for q, a in rating.items()},
                    **{k: rec.get(k) for k in ("constraint", "expertise", "critical_type")},
                }
            )
    return out


@pytest.fixture(scope="module")
def report():
    instances, unreadable = item_instances(annotations("sequential") + annotations("e2e"))
    assert unreadable == 0 and len(instances) == 18
    return {t["id"]: t for t in build(instances, BOOT)["tables"]}


def cells(table, generator):
    (row,) = [r for r in table["rows"] if r["generator"] == generator]
    return row["cells"]


def test_table2_by_hand(report):
    """sequential: EXECUTABLE 8/9 (only the expert bread item fails Q1, 1 of 3 Yes), CUSTOMIZED
    6/9 (room refinement, health expert, bread prerequisite fail Q2), FULLYCORRECT 5/9 (room
    prerequisite and preference, health beginner and intermediate, bread preference).
    e2e: EXECUTABLE 4/9, CUSTOMIZED 6/9, FULLYCORRECT 3/9 (room refinement, health
    intermediate, bread preference)."""
    t = report["table2"]
    assert [r["generator"] for r in t["rows"]] == ["sequential", "e2e"]
    seq, e2e = cells(t, "sequential"), cells(t, "e2e")
    assert seq["executable"]["value"] == pytest.approx(800 / 9)
    assert seq["customized"]["value"] == pytest.approx(600 / 9)
    assert seq["fully_correct"]["value"] == pytest.approx(500 / 9)
    assert e2e["executable"]["value"] == pytest.approx(400 / 9)
    assert e2e["customized"]["value"] == pytest.approx(600 / 9)
    assert e2e["fully_correct"]["value"] == pytest.approx(300 / 9)
    assert seq["fully_correct"]["n"] == 9
    assert seq["fully_correct"]["low"] <= 500 / 9 <= seq["fully_correct"]["high"]
    (test,) = t["neighbours"]
    # FullyCorrect on the same 9 items: sequential only on 3 (room prerequisite and preference,
    # health beginner), e2e only on 1 (room refinement): McNemar p = 2·P(Bin(4, ½) ≤ 1) = 0.625
    assert test["test"] == "McNemar exact"
    assert test["n_common"] == 9
    assert test["difference"] == pytest.approx(200 / 9)
    assert test["p_value"] == pytest.approx(0.625)
    assert test["significant"] is False


def test_problems_flagged_by_hand(report):
    """Q2 'missing' for sequential: 1 of 3 raters on room prerequisite, 2 of 3 on bread
    prerequisite → (1/3 + 2/3) / 9 items = 11.1%; Q1 'No' for e2e: room preference 2/3, health
    beginner 2/3, health intermediate 1/3, health expert 2/3, bread prerequisite 2/3, bread
    refinement 2/3 → 11/3 / 9 = 40.7%."""
    assert cells(report["errors-q2"], "sequential")["q2_missing"]["value"] == pytest.approx(100 / 9)
    assert cells(report["errors-q1"], "e2e")["q1_no"]["value"] == pytest.approx(100 * 11 / 27)


def test_slices_by_hint_type_and_expertise(report):
    """Critical type: constraint (room) sequential 2/3, e2e 1/3; both (bread) 1/3 each.
    Constraint type: prerequisite sequential 1/2, e2e 0/2; the health items have none
    ("not recorded"). Expertise: beginner sequential 2/2, expert 0/2."""
    fc = report["critical_type-fully_correct"]
    assert [c["key"] for c in fc["columns"]] == ["constraint", "expertise", "both", "all"]
    assert cells(fc, "sequential")["constraint"]["value"] == pytest.approx(200 / 3)
    assert cells(fc, "e2e")["constraint"]["value"] == pytest.approx(100 / 3)
    assert cells(fc, "e2e")["both"]["value"] == pytest.approx(100 / 3)
    assert cells(fc, "sequential")["all"]["value"] == pytest.approx(500 / 9)
    con = report["constraint-fully_correct"]
    assert [c["key"] for c in con["columns"]][-2:] == [NOT_RECORDED, "all"]
    assert cells(con, "sequential")["prerequisite"]["value"] == pytest.approx(50.0)
    assert cells(con, "e2e")["prerequisite"]["value"] == pytest.approx(0.0)
    assert cells(con, "sequential")[NOT_RECORDED]["n"] == 3
    exp = report["expertise-executable"]
    assert cells(exp, "sequential")["beginner"]["value"] == pytest.approx(100.0)
    assert cells(report["expertise-fully_correct"], "sequential")["expert"]["value"] == 0.0


def test_unreadable_answers_are_counted_not_scored():
    rows = [
        {"generator": "g", "item": "a", "q1": ["yes"], "q2": ["yes"]},
        {"generator": "g", "item": "b", "q1": [], "q2": ["yes"]},
    ]
    instances, unreadable = item_instances(rows)
    assert [i.item for i in instances] == ["a"] and unreadable == 1
    assert instances[0].attrs == {
        "constraint": NOT_RECORDED,
        "expertise": NOT_RECORDED,
        "critical_type": NOT_RECORDED,
    }
