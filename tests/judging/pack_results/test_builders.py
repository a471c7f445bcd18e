"""The pack results pages' table builders (pure) against numbers computed by hand from the
seed notes' worked examples (the demo fixtures, scored by the real packs), the bootstrap's
determinism, and the paired tests between neighbours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.packs.registry import get_pack
from judging.pack_results.common import (
    Bootstrap,
    Instance,
    cell,
    comparison_table,
    paired_test,
)
from judging.pack_results.longproc import tables as longproc
from judging.pack_results.procbench import tables as procbench
from judging.stats.bootstrap import bootstrap_mean_ci

FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "pack_results"
BOOT = Bootstrap(n_resamples=500, seed=0)
GENERATORS = ("paper-worked-examples", "gold-reference")


def instances(pack: str, attrs: tuple[str, ...]) -> list[Instance]:
    """Each fixture line of ``pack`` scored by the pack itself, as the page reads it."""
    out = []
    for generator in GENERATORS:
        for line in (FIXTURES / f"{pack}-{generator}.jsonl").read_text().splitlines():
            record = json.loads(line)
            scored = get_pack(pack).score(record)
            out.append(
                Instance(
                    generator=generator,
                    item=record["id"],
                    pack=pack,
                    metrics=scored.metrics,
                    breakdown=scored.breakdown,
                    attrs={a: record[a] for a in (*attrs, "worked_example") if a in record},
                )
            )
    return out


def rows(table):
    return {r["generator"]: r for r in table["rows"]}


def value(table, generator, column):
    return rows(table)[generator]["cells"][column]["value"]


# --- ProcBench ---------------------------------------------------------------------------------
# paper-worked-examples: the 5 rows of notes §3.2's DeleteChar table (N = 8, Medium) and the
# first 4 steps of the same problem (N = 4, Short), exact and with the step-3 slip.
# PML 8, 2, 6, 8, 0 | 4, 2; PA 1, .25, .75, .8, 0 | 1, .5; SM 1,0,0,0,0 | 1,0; FM 1,1,0,1,1 | 1,1


@pytest.fixture(scope="module")
def procbench_report():
    return procbench.build(instances("procbench", ("task",)), BOOT)


def test_procbench_table2_bins_match_the_hand_computed_means(procbench_report):
    tables = {t["id"]: t for t in procbench_report["tables"]}
    pa, sm, fm, pml = (tables[f"bins-{m}"] for m in ("pa", "sm", "fm", "pml"))
    w = "paper-worked-examples"
    assert value(pa, w, "medium") == pytest.approx(2.8 / 5)
    assert value(pa, w, "short") == pytest.approx(0.75)
    assert value(pa, w, "overall") == pytest.approx(4.3 / 7)
    assert value(sm, w, "medium") == pytest.approx(0.2)
    assert value(sm, w, "overall") == pytest.approx(2 / 7)
    assert value(fm, w, "medium") == pytest.approx(0.8)
    assert value(fm, w, "overall") == pytest.approx(6 / 7)
    assert value(pml, w, "medium") == pytest.approx(4.8)
    assert value(pml, w, "short") == pytest.approx(3.0)
    assert value(pml, w, "overall") == pytest.approx(30 / 7)
    long_cell = rows(pa)[w]["cells"]["long"]
    assert long_cell["value"] is None and long_cell["n"] == 0 and long_cell["why"] == "no items"
    assert value(pml, "gold-reference", "overall") == pytest.approx(48 / 7)
    # the pack's own report helper (per_bin) gives the same means
    own = procbench_report["pack_summary"][w]
    assert own["medium"]["pa"] == pytest.approx(value(pa, w, "medium"))
    assert own["overall"]["pml"] == pytest.approx(value(pml, w, "overall"))


def test_procbench_ranking_and_neighbour_tests(procbench_report):
    tables = {t["id"]: t for t in procbench_report["tables"]}
    pa, sm = tables["bins-pa"], tables["bins-sm"]
    assert [r["generator"] for r in pa["rows"]] == ["gold-reference", "paper-worked-examples"]
    (test,) = pa["neighbours"]
    assert test["n_common"] == 7
    assert test["difference"] == pytest.approx(1 - 4.3 / 7)
    # PA is not 0/1: exact sign-flip test, 5 non-zero differences all one way → 2 / 2^5
    assert test["test"] == "paired sign-flip permutation"
    assert test["p_value"] == pytest.approx(2 / 2**5)
    assert test["low"] <= test["difference"] <= test["high"]
    # SM is 0/1: McNemar exact, 5 items only gold-reference matches, none the other way
    (sm_test,) = sm["neighbours"]
    assert sm_test["test"] == "McNemar exact"
    assert sm_test["p_value"] == pytest.approx(2 / 2**5)
    assert sm_test["p_holm"] == pytest.approx(2 / 2**5)
    assert sm_test["significant"] is False


def test_procbench_per_task_and_pml_curve(procbench_report):
    tasks = next(t for t in procbench_report["tables"] if t["id"] == "tasks-pa")
    assert [c["key"] for c in tasks["columns"]] == ["DeleteChar", "overall"]
    assert value(tasks, "paper-worked-examples", "DeleteChar") == pytest.approx(4.3 / 7)
    (curve,) = procbench_report["curves"]
    series = {s["generator"]: s["points"] for s in curve["series"]}
    assert [(p["x"], p["value"]) for p in series["paper-worked-examples"]] == [
        (4.0, pytest.approx(3.0)),
        (8.0, pytest.approx(4.8)),
    ]
    assert [p["value"] for p in series["gold-reference"]] == [4.0, 8.0]


# --- LongProc -------------------------------------------------------------------------------------
# paper-worked-examples: Countdown F.5 (0.5K) correct, F.5 cut off (0.5K, length) wrong, G.4 (2K)
# "No feasible solution" wrong; Travel F.6 (2K) valid, G.6 (8K) hallucinated flight.


@pytest.fixture(scope="module")
def longproc_report():
    data = instances("longproc-countdown", ("level",)) + instances("longproc-travel", ("level",))
    return longproc.build(data, BOOT)


def test_longproc_table3_level_averages(longproc_report):
    tables = {t["id"]: t for t in longproc_report["tables"]}
    levels = tables["levels"]
    w, g = "paper-worked-examples", "gold-reference"
    assert [c["key"] for c in levels["columns"]] == ["0.5K", "2K", "8K"]
    assert value(levels, w, "0.5K") == pytest.approx(50.0)  # countdown 1, 0
    assert value(levels, w, "2K") == pytest.approx(50.0)  # (countdown 0 + travel 100) / 2
    assert value(levels, w, "8K") == pytest.approx(0.0)
    assert [value(levels, g, lv) for lv in ("0.5K", "2K", "8K")] == [100.0, 100.0, 100.0]
    # the 2K average resamples within each task, so every resample is (0 + 100) / 2
    two_k = rows(levels)[w]["cells"]["2K"]
    assert (two_k["low"], two_k["high"], two_k["strata"]) == (50.0, 50.0, 2)
    at_2k = tables["level-2K"]
    assert [c["key"] for c in at_2k["columns"]] == ["countdown", "travel", "avg"]
    assert value(at_2k, w, "countdown") == 0.0 and value(at_2k, w, "travel") == 100.0
    (test,) = at_2k["neighbours"]
    assert test["generator_a"] == g and test["difference"] == pytest.approx(50.0)
    assert test["test"] == "paired sign-flip permutation (within strata)"
    # one instance differs (Countdown G.4), one agrees: no evidence of a difference
    assert test["p_value"] == pytest.approx(1.0) and test["significant"] is False
    assert "0.5K: average over Countdown." in longproc_report["notes"]


def test_longproc_termination_table5(longproc_report):
    tables = {t["id"]: t for t in longproc_report["tables"]}
    term = tables["termination-countdown-0.5K"]
    w = "paper-worked-examples"
    assert value(term, w, "acc") == pytest.approx(50.0)
    assert value(term, w, "term") == pytest.approx(50.0)  # F.5 stop, the cut one length
    assert value(term, w, "acc_term") == pytest.approx(100.0)
    assert value(term, "gold-reference", "term") == 100.0
    assert "termination-travel-8K" in tables


def test_longproc_score_against_length_curve(longproc_report):
    (curve,) = longproc_report["curves"]
    assert curve["log_x"] is True
    series = {s["generator"]: s["points"] for s in curve["series"]}
    assert [(p["label"], p["value"]) for p in series["paper-worked-examples"]] == [
        ("0.5K", 50.0),
        ("2K", 50.0),
        ("8K", 0.0),
    ]


def test_longproc_level_is_read_from_aliases_and_missing_levels_are_noted():
    assert longproc.level_of("2k") == "2K" and longproc.level_of(8000) == "8K"
    assert longproc.level_of("500") == "0.5K" and longproc.level_of("4K") is None
    bare = [Instance("m", "x", "longproc-countdown", {"correct": 1})]
    report = longproc.build(bare, BOOT)
    assert report["tables"] == []
    assert "1 scored instance(s) have no level" in report["notes"][0]


# --- the shared statistics ---------------------------------------------------------------------


def test_bootstrap_ci_is_the_how2score_one_and_deterministic_with_its_seed():
    values = {"all": {i: (i * 7919 % 101) / 101 for i in range(40)}}
    a, b = cell(values, Bootstrap(1000, seed=7)), cell(values, Bootstrap(1000, seed=7))
    assert a == b
    direct = bootstrap_mean_ci(list(values["all"].values()), n_resamples=1000, seed=7)
    assert (a["low"], a["high"]) == (direct.low, direct.high)
    other = cell(values, Bootstrap(1000, seed=8))
    assert (other["low"], other["high"]) != (a["low"], a["high"])
    assert a["low"] < a["value"] < a["high"]


def test_paired_test_uses_only_common_items_and_holm_over_the_table():
    a = {"all": {1: 1.0, 2: 1.0, 3: 0.5}}
    b = {"all": {2: 0.0, 3: 0.5, 4: 1.0}}
    test = paired_test(a, b, BOOT)
    assert test["n_common"] == 2 and test["difference"] == pytest.approx(0.5)
    assert paired_test(a, {"all": {9: 1.0}}, BOOT)["why"] == "no items in common"
    table = comparison_table(
        table_id="t",
        title="t",
        caption="",
        columns=[("x", "x")],
        data={"a": {"x": a}, "b": {"x": b}, "c": {"x": {"all": {}}}},
        rank_by="x",
        boot=BOOT,
    )
    assert [r["generator"] for r in table["rows"]] == ["a", "b", "c"]  # no value last
    assert len(table["neighbours"]) == 1  # c has no value: not compared
    assert table["neighbours"][0]["p_holm"] == table["neighbours"][0]["p_value"]


def test_sign_flip_test_is_exact_for_few_items_and_seeded_for_many():
    import numpy as np

    from judging.pack_results.common import sign_flip_p

    one = {"all": (np.array([1.0]), np.array([0.0]))}
    assert sign_flip_p(one, seed=0) == 1.0  # one differing instance is no evidence
    three = {"all": (np.array([0.9, 0.8, 0.7]), np.array([0.1, 0.2, 0.3]))}
    assert sign_flip_p(three, seed=0) == pytest.approx(2 / 8)  # exact: both all-same patterns
    many = {"all": (np.linspace(0.5, 1.0, 30), np.zeros(30))}
    p = sign_flip_p(many, seed=3)
    assert p == sign_flip_p(many, seed=3) == pytest.approx(1 / 1001)
    noise = {"all": (np.array([0.1, -0.2, 0.3, -0.1] * 5), np.zeros(20))}
    assert sign_flip_p(noise, seed=0) > 0.05
