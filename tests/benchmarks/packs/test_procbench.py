"""ProcBench PML / PA / SM / FM (notes §3.2) on the DeleteChar gold of Fig. 1, typed equality,
the [FLAG] options and the report helpers."""

import pytest

from benchmarks.packs import procbench
from benchmarks.packs.registry import RecordError, get_pack

# Fig. 1: "hchouumkd", delete c, u, h, k, d, o, h, m (first occurrence each); t0 left out.
GOLD = ["hhouumkd", "hhoumkd", "houmkd", "houmd", "houm", "hum", "um", "u"]


def test_deletechar_gold_reproduces_the_procedure():
    state, seq = "hchouumkd", []
    for ch in "cuhkdohm":
        state = state.replace(ch, "", 1)
        seq.append(state)
    assert seq == GOLD


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        (GOLD, (8, 1.0, 1, 1)),
        ([*GOLD[:2], "hoummkd", *GOLD[3:]], (2, 0.25, 0, 1)),
        (GOLD[:6], (6, 0.75, 0, 0)),
        ([*GOLD, "u", "u"], (8, 0.8, 0, 1)),
        (["u"], (0, 0.0, 0, 1)),
    ],
    ids=["exact", "third-wrong", "first-six", "two-extra", "final-only"],
)
def test_notes_table(prediction, expected):
    scored = get_pack("procbench").score({"id": "x", "gold": GOLD, "prediction": prediction})
    m = scored.metrics
    assert (m["pml"], m["pa"], m["sm"], m["fm"]) == pytest.approx(expected)


def test_breakdown_names_the_first_divergence():
    third = procbench.score_record({"gold": GOLD, "prediction": [*GOLD[:2], "hoummkd", *GOLD[3:]]})
    assert third.breakdown["first_divergence"] == 3
    assert third.breakdown["divergence"] == "mismatch"
    assert third.breakdown["matches"] == [True, True, False, True, True, True, True, True]
    short = procbench.score_record({"gold": GOLD, "prediction": GOLD[:6]})
    assert (short.breakdown["first_divergence"], short.breakdown["divergence"]) == (7, "missing")
    assert short.breakdown["matches"][6:] == [False, False]
    extra = procbench.score_record({"gold": GOLD, "prediction": [*GOLD, "u"]})
    assert (extra.breakdown["first_divergence"], extra.breakdown["divergence"]) == (9, "extra")
    exact = procbench.score_record({"gold": GOLD, "prediction": GOLD})
    assert exact.breakdown["first_divergence"] is None
    assert (exact.breakdown["n"], exact.breakdown["m"]) == (8, 8)


def test_typed_equality():
    eq = procbench.states_equal
    assert eq(3, 3) and eq(3, 3.0) and eq("ab", "ab") and eq(["a", 1], ["a", 1])
    assert not eq("1", 1) and not eq(True, 1) and not eq(1, True) and not eq("ab", "Ab")
    assert not eq("ab", "ab ") and not eq(["a", 1], ["a", "1"]) and not eq(["a"], ["a", "b"])
    assert eq([[1, 2], [3]], [[1, 2], [3]]) and not eq([[1, 2], [3]], [[1, 2], [4]])
    assert eq(None, None) and not eq(None, 0) and not eq(None, "")
    assert eq({"a": [1]}, {"a": [1]}) and not eq({"a": [1]}, {"b": [1]})
    # A list state is one step: one wrong element makes the whole step wrong.
    scored = procbench.score_record({"gold": [[1, 2], [2, 1]], "prediction": [[1, 2], [2, "1"]]})
    assert scored.metrics == {"pml": 1, "pa": 0.5, "sm": 0, "fm": 0}


def test_flag_missing_prediction_default_scores_zero_and_error_option_rejects():
    for record in (
        {"gold": GOLD},
        {"gold": GOLD, "prediction": None},
        {"gold": GOLD, "prediction": []},
    ):
        assert procbench.score_record(record).metrics == {"pml": 0, "pa": 0.0, "sm": 0, "fm": 0}
    with pytest.raises(RecordError) as exc:
        procbench.score_record({"gold": GOLD, "prediction": None}, missing_prediction="error")
    assert exc.value.field == "prediction"


def test_flag_missing_final_in_the_parsed_object_form():
    full = {"intermediate": GOLD[:-1], "final": "u"}
    assert procbench.score_record({"gold": GOLD, "prediction": full}).metrics["sm"] == 1
    no_final = {"intermediate": GOLD[:-1]}
    scored = procbench.score_record({"gold": GOLD, "prediction": no_final})
    assert scored.metrics == {"pml": 7, "pa": 7 / 8, "sm": 0, "fm": 0}
    with pytest.raises(RecordError, match="final"):
        procbench.score_record({"gold": GOLD, "prediction": no_final}, missing_final="error")
    # FM is 0 when the final is not stated, even if the last intermediate equals tN.
    last_is_final = {"intermediate": GOLD}
    assert procbench.score_record({"gold": GOLD, "prediction": last_is_final}).metrics["fm"] == 0


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"prediction": ["u"]}, "gold"),
        ({"gold": [], "prediction": ["u"]}, "gold"),
        ({"gold": "u", "prediction": ["u"]}, "gold"),
        ({"gold": GOLD, "prediction": "u"}, "prediction"),
        ({"gold": GOLD, "prediction": {"intermediate": "x", "final": "u"}}, "prediction"),
    ],
)
def test_bad_records_name_the_field(record, field):
    with pytest.raises(RecordError) as exc:
        procbench.score_record(record)
    assert exc.value.field == field
    assert f"field '{field}'" in str(exc.value)


def test_pack_options_are_checked_by_name():
    pack = get_pack("procbench")
    assert pack.options == {"missing_prediction": "empty", "missing_final": "none"}
    with pytest.raises(RecordError):
        pack.score_with({"gold": GOLD}, {"missing_prediction": "error"})
    with pytest.raises(ValueError, match="unknown option"):
        pack.score_with({"gold": GOLD}, {"nope": 1})


def test_step_bins_and_overall_is_example_weighted():
    assert [procbench.step_bin(n) for n in (1, 2, 6, 7, 16, 17, 25, 30)] == [
        "short",
        "short",
        "short",
        "medium",
        "medium",
        "long",
        "long",
        "long",
    ]
    # Table 2, o1-preview PA: (0.799·50 + 0.736·100 + 0.599·90)/240 = 0.698.
    bins = {
        "short": {"pa": 0.799, "n": 50},
        "medium": {"pa": 0.736, "n": 100},
        "long": {"pa": 0.599, "n": 90},
    }
    assert round(procbench.overall_from_bins(bins, "pa"), 3) == 0.698
    rows = [
        {"n": 3, "pa": 1.0, "sm": 1},
        {"n": 5, "pa": 0.0, "sm": 0},
        {"n": 10, "pa": 0.5, "sm": 0},
        {"n": 20, "pa": 0.25, "sm": 0},
    ]
    report = procbench.per_bin(rows, metrics=("pa", "sm"))
    assert report["short"] == {"pa": 0.5, "sm": 0.5, "n": 2}
    assert report["medium"] == {"pa": 0.5, "sm": 0.0, "n": 1}
    assert report["long"] == {"pa": 0.25, "sm": 0.0, "n": 1}
    assert report["overall"]["pa"] == pytest.approx(1.75 / 4)
    assert report["overall"]["pa"] == pytest.approx(
        procbench.overall_from_bins({k: report[k] for k in ("short", "medium", "long")}, "pa")
    )


def test_at_or_beyond_curve():
    rows = [{"pml": 8, "n": 8}, {"pml": 2, "n": 8}, {"pml": 0, "n": 2}, {"pml": 3, "n": 3}]
    curve = procbench.at_or_beyond_curve(rows)
    assert [p["k"] for p in curve] == list(range(1, 9))
    assert [p["proportion"] for p in curve[:4]] == [0.75, 0.75, 0.5, 0.25]
    assert curve[-1] == {"k": 8, "proportion": 0.25, "n": 4}
    eligible = procbench.at_or_beyond_curve(rows, among="eligible")
    assert eligible[2] == {"k": 3, "proportion": 2 / 3, "n": 3}
    assert eligible[3] == {"k": 4, "proportion": 0.5, "n": 2}


def test_item_health_lists_items_every_model_fails():
    rows = [
        {"id": "a", "model": "m1", "pa": 0.0},
        {"id": "a", "model": "m2", "pa": 0.0},
        {"id": "b", "model": "m1", "pa": 0.0},
        {"id": "b", "model": "m2", "pa": 0.5},
        {"id": "c", "model": "m1", "pa": 0.0},
    ]
    assert procbench.item_health(rows) == [{"id": "a", "models": 2, "best": 0.0}]
    assert [r["id"] for r in procbench.item_health(rows, min_models=1)] == ["a", "c"]
    assert [r["id"] for r in procbench.item_health(rows, threshold=0.5)] == ["a", "b"]
