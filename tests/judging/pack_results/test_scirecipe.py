"""The SciRecipe results page's numbers (judging.pack_results.scirecipe.tables): Table 1's
nine metrics ×100 and their Avg, SCORE and its parts, BLEU-1…4, the level split, by hand from
the worked examples (demo/fixtures/pack_results/scirecipe-*.jsonl: gold harvest, lyse,
centrifuge, quantify; answers [harvest, lyse, quantify], [harvest, centrifuge, lyse,
quantify], [harvest, centrifuge, lyse, stain, quantify], and the gold itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.packs.scirecipe import score_record
from judging.pack_results.common import Bootstrap, Instance
from judging.pack_results.scirecipe.tables import TABLE1, avg_metrics, build

FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "pack_results"
BOOT = Bootstrap(n_resamples=400, seed=0)


def scored(generator: str) -> list[Instance]:
    out = []
    for line in (FIXTURES / f"scirecipe-{generator}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out.append(Instance(generator, rec["id"], "scirecipe", score_record(rec).metrics))
    return out


@pytest.fixture(scope="module")
def report():
    instances = scored("paper-worked-examples") + scored("gold-reference")
    built = build(instances, BOOT)
    return built, {t["id"]: t for t in built["tables"]}


def cells(table, generator):
    (row,) = [r for r in table["rows"] if r["generator"] == generator]
    return row["cells"]


def test_table1_by_hand(report):
    """Worked examples: Order-S 0 on all three (none equals the gold); Step-M 1 only for the
    swap (4 steps) → 33.33; Order-LCS 2L/(n+m): 6/7, 6/8, 6/9 → 75.79. The gold copy: 100
    everywhere but Semantic-A (the anchor mean term, 0–1.5 by default: 1 · (Obj 1 + ½ Par 1) =
    150) and METEOR (NLTK's fragmentation penalty 0.5·(1/m)³ is never 0)."""
    built, tables = report
    t1 = tables["table1"]
    assert [c["key"] for c in t1["columns"]] == [*TABLE1, "avg"]
    ex = cells(t1, "paper-worked-examples")
    assert ex["order_s"]["value"] == 0.0
    assert ex["step_m"]["value"] == pytest.approx(100 / 3)
    assert ex["order_lcs"]["value"] == pytest.approx(100 * (6 / 7 + 6 / 8 + 6 / 9) / 3)
    gold = cells(t1, "gold-reference")
    assert gold["semantic_a"]["value"] == pytest.approx(150.0)
    for m in ("order_lcs", "order_s", "order_tau", "step_m", "bleu_avg", "rouge_l"):
        assert gold[m]["value"] == pytest.approx(100.0), m
    assert 99 < gold["meteor"]["value"] < 100
    # KW-F1 is off by default: Avg is the mean of the other eight, and a note says so
    assert gold["kw_f1"]["value"] is None
    used = [m for m in TABLE1 if m != "kw_f1"]
    assert gold["avg"]["value"] == pytest.approx(sum(gold[m]["value"] for m in used) / 8)
    assert any("KW-F1" in n for n in built["notes"])
    assert [r["generator"] for r in t1["rows"]] == ["gold-reference", "paper-worked-examples"]
    (test,) = t1["neighbours"]
    assert test["n_common"] == 3 and "McNemar" not in test["test"]
    assert test["difference"] == pytest.approx(gold["avg"]["value"] - ex["avg"]["value"])


def test_table1_says_why_values_pass_100(report):
    """Semantic-A's default scale is 0–1.5 (the gold copy: 150), so Table 1 says so where a
    value passes 100; normalised scores (0–1) get no such words."""
    built, tables = report
    assert "Semantic-A is on its raw scale, 0 to 1.5" in tables["table1"]["caption"]
    assert any("values above 100 are Semantic-A's raw scale" in n for n in built["notes"])
    unit = [
        Instance(i.generator, i.item, i.pack, {**i.metrics, "semantic_a": 0.5})
        for i in scored("gold-reference")
    ]
    plain = build(unit, BOOT)
    (t1,) = [t for t in plain["tables"] if t["id"] == "table1"]
    assert "raw scale" not in t1["caption"]
    assert not any("above 100" in n for n in plain["notes"])


def test_score_parts_bleu_and_levels(report):
    _built, tables = report
    assert cells(tables["score"], "gold-reference")["format_gate"]["n"] == 0  # structured: n/a
    assert cells(tables["score"], "gold-reference")["order_strict"]["value"] == 1.0
    # strict order: the subsequence example passes, the two reorderings do not
    assert cells(tables["score"], "paper-worked-examples")["order_strict"]["value"] == (
        pytest.approx(1 / 3)
    )
    assert cells(tables["bleu"], "gold-reference")["bleu_4"]["value"] == pytest.approx(100.0)
    assert "level2" in tables and "level1" not in tables  # 4 gold actions: Level 2


def test_avg_uses_only_metrics_every_instance_has():
    a = Instance("a", "x", "scirecipe", dict.fromkeys(TABLE1, 0.5) | {"kw_f1": 0.1})
    b = Instance("a", "y", "scirecipe", dict.fromkeys(TABLE1, 0.5) | {"kw_f1": None})
    used, left_out = avg_metrics([a, b])
    assert left_out == ["kw_f1"] and len(used) == 8
    table = {t["id"]: t for t in build([a, b], BOOT)["tables"]}["table1"]
    assert cells(table, "a")["avg"]["value"] == pytest.approx(50.0)
    assert cells(table, "a")["kw_f1"]["value"] == pytest.approx(10.0)
    assert cells(table, "a")["kw_f1"]["n"] == 1
