"""SciRecipe SCORE: the seed notes' worked examples (§4.2) and the Grok 4 / o1 cases."""

from __future__ import annotations

import json
import math
from io import StringIO

import pytest
from django.core.management import call_command

from benchmarks.packs.registry import RecordError, get_pack
from benchmarks.packs.scirecipe import ScoreOptions, parse_answer, score_record
from benchmarks.packs.scirecipe import metrics as m
from tests.benchmarks.packs._scirecipe_cases import GOLD, GROK4, O1

HARVEST = ["harvest", "lyse", "centrifuge", "quantify"]


def s(action, objects=(), parameters=()):
    return {"action": action, "objects": list(objects), "parameters": list(parameters)}


@pytest.mark.parametrize(
    ("n_gold", "values"),
    [
        (2, [1, 0, 0, 0]),
        (3, [1, 0, 0, 0]),
        (4, [1, 0.7071, 0, 0]),
        (5, [1, 0.8660, 0.5, 0]),
        (6, [1, 0.8660, 0.5, 0]),
        (10, [1, 0.9659, 0.8660, 0.7071]),
    ],
)
def test_step_count_factor_table(n_gold, values):
    for d, expected in enumerate(values):
        assert m.step_count_factor(n_gold + d, n_gold) == pytest.approx(expected, abs=1e-4)
        assert m.step_count_factor(n_gold - d, n_gold) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    ("pred", "strict", "lcs_ref", "lcs_dice"),
    [
        (["harvest", "lyse", "quantify"], 1, 0.75, 6 / 7),
        (["harvest", "centrifuge", "lyse", "quantify"], 0, 0.75, 0.75),
        (["lyse", "harvest", "quantify", "centrifuge"], 0, 0.5, 0.5),
        (["harvest", "centrifuge", "lyse", "stain", "quantify"], 0, 0.75, 2 / 3),
        (HARVEST, 1, 1.0, 1.0),
    ],
)
def test_order_worked_examples(pred, strict, lcs_ref, lcs_dice):
    assert m.order_strict(pred, HARVEST) == strict
    assert m.order_lcs(pred, HARVEST, "reference") == pytest.approx(lcs_ref)
    assert m.order_lcs(pred, HARVEST, "dice") == pytest.approx(lcs_dice, abs=1e-3)


def test_strict_order_accepts_supersets_and_subsets_but_not_reordering():
    assert m.order_strict(["a", "x", "b", "c"], ["a", "b", "c"]) == 1
    assert m.order_strict(["a", "c"], ["a", "b", "c"]) == 1
    assert m.order_strict(["b", "a"], ["a", "b"]) == 0


def test_greedy_anchor_example_and_decay():
    pred = ["harvest", "centrifuge", "lyse", "stain", "quantify"]
    anchors = m.greedy_anchors(pred, HARVEST)
    assert anchors == [(1, 1), (2, 3), (5, 4)]
    decays = [m.positional_decay(i, j, 4, 1.5) for i, j in anchors]
    assert decays == pytest.approx([1.0, 0.875, 0.875])
    # Greedy anchors are monotone, so Kendall over them is 1 (the [FLAG]); occurrence anchors
    # pair lyse with gold step 2 and expose the swap: C = 5, D' = 1.
    assert m.kendall_tau_pairs(anchors) == 1.0
    occ = m.occurrence_anchors(pred, HARVEST)
    assert occ == [(1, 1), (2, 3), (3, 2), (5, 4)]
    assert m.kendall_tau_pairs(occ) == pytest.approx(4 / 6)
    assert m.kendall_tau_pairs([(1, 1)]) == 0.0


def test_iou_parts():
    assert m.object_iou(["cells", "lysate"], ["Cells"]) == 0.5
    assert m.object_iou(["cell pellet"], ["pellet"]) == 0.0
    assert m.object_iou([], []) == 1.0 and m.object_iou([], ["x"]) == 0.0
    assert m.object_iou(["cell pellet"], ["pellet"], "subword") == 0.5
    assert m.parameter_iou([], []) == 1.0
    assert m.parameter_iou(["10 min"], []) == 0.0
    assert m.parameter_iou(["bradford assay"], ["bca assay"]) == pytest.approx(1 / 3)


def _harvest_record(**extra):
    gold = [
        s("harvest", ["cells"]),
        s("lyse", ["cells"], ["ripa buffer"]),
        s("centrifuge", ["lysate"], ["12000 g", "10 min"]),
        s("quantify", ["protein"], ["bca assay"]),
    ]
    pred = [
        s("harvest", ["cells"]),
        s("centrifuge", ["lysate"], ["12000 g", "10 min"]),
        s("lyse", ["cells"], ["ripa buffer"]),
        s("stain", ["cells"]),
        s("quantify", ["protein"], ["bradford assay"]),
    ]
    return {"id": "h1", "gold": gold, "prediction": pred, **extra}


def test_structured_example_by_hand():
    scored = score_record(_harvest_record())
    mt = scored.metrics
    # terms: 1·(1 + ½·1) = 1.5; 0.875·1.5 = 1.3125; 0.875·(1 + ½·⅓) = 1.0208…
    mean_term = (1.5 + 1.3125 + 0.875 * (1 + 1 / 6)) / 3
    assert mt["semantic_a"] == pytest.approx(mean_term)
    assert mt["order_strict"] == 0 and mt["order_s"] == 0
    assert mt["r_semantics"] == pytest.approx(mean_term)  # Order term 0 + mean term
    assert mt["r_scale"] == pytest.approx(math.cos(math.pi / 4))  # d = 1, M = 2
    assert mt["score"] == pytest.approx(math.cos(math.pi / 4) * mean_term)
    assert mt["step_m"] == 0
    assert mt["order_lcs"] == pytest.approx(2 / 3)
    assert mt["order_tau"] == pytest.approx(4 / 6)
    assert mt["format_gate"] is None and mt["consistency_gate"] is None
    assert mt["level"] == 2 and scored.breakdown["anchors"] == [
        [1, 1],
        [2, 3],
        [5, 4],
    ]


def test_options_change_the_flagged_choices():
    base = score_record(_harvest_record()).metrics
    lcs = score_record(_harvest_record(), order_mode="lcs").metrics
    assert lcs["r_semantics"] == pytest.approx(base["semantic_a"] + 0.75)
    alt = score_record(
        _harvest_record(),
        order_lcs_norm="reference",
        order_tau_anchors="greedy",
        order_s="strict_subsequence",
        semantic_a="mean_normalized",
        score_scale="unit",
    ).metrics
    assert alt["order_lcs"] == 0.75 and alt["order_tau"] == 1.0 and alt["order_s"] == 0
    assert alt["semantic_a"] == pytest.approx(base["semantic_a"] / 1.5)
    assert alt["score"] == pytest.approx(base["score"] / 2.5)
    # Parameters are compared only when Obj ≥ 0.5.
    rec = {"gold": [s("wash", ["a", "b", "c"], ["x"])], "prediction": [s("wash", ["a"], ["x"])]}
    assert score_record(rec).breakdown["semantic_terms"][0]["par"] == 0.0
    assert score_record(rec, par_obj_threshold=0.3).breakdown["semantic_terms"][0]["par"] == 1.0


def test_length_penalty_ratio_and_literal():
    opts = ScoreOptions()
    assert m.length_divisor(30, opts) == 1.0
    assert m.length_divisor(45, opts) == 1.5
    assert m.length_divisor(45, ScoreOptions(length_penalty="literal")) == 45


@pytest.mark.parametrize(
    ("answer", "n_pred", "strict", "format_gate"),
    [(GROK4, 13, 0, 1), (O1, 19, 1, 0)],
)
def test_grok4_and_o1_cases(answer, n_pred, strict, format_gate):
    scored = score_record({"id": "case", "gold": GOLD, "prediction": answer})
    mt, bd = scored.metrics, scored.breakdown
    assert bd["n_pred"] == n_pred and bd["n_gold"] == 4
    assert bd["gold_actions"] == ["wash", "remove", "incubate", "wash"]
    assert mt["order_strict"] == strict
    assert m.lcs_length(bd["pred_actions"], bd["gold_actions"]) == (3 if strict == 0 else 4)
    assert m.order_lcs(bd["pred_actions"], bd["gold_actions"], "reference") == (
        0.75 if strict == 0 else 1.0
    )
    assert mt["order_lcs"] == pytest.approx(0.353 if strict == 0 else 0.348, abs=1e-3)
    assert bd["anchors"] == [[1, 2], [2, 4]]
    assert mt["step_m"] == 0 and bd["step_count_factor"] == 0.0
    assert mt["score"] == 0
    assert mt["format_gate"] == format_gate
    assert mt["consistency_gate"] == 1  # every key token is in its orc line


def test_o1_fails_format_only_on_closing_tag():
    parsed = parse_answer(O1)
    assert not parsed.format_ok and parsed.problems == ["</note> missing"]
    assert len(parsed.steps) == 19 and len(parsed.orc) == 19


def test_consistency_gate_failures_and_unit_normalisation():
    ok = (
        '<think>t</think><key>\nStep 1: {"action": "detach", "objects": ["bmdcs"], '
        '"parameters": ["10 min", "37 °c", "5 μl"]}\n</key>'
        "<orc>\nStep 1: Detach BMDCs for 10min at 37°C with 5 µL.\n</orc><note>n</note>"
    )
    gold = [s("detach", ["bmdcs"], ["10 min", "37 °c"])]
    good = score_record({"gold": gold, "prediction": ok}).metrics
    assert good["format_gate"] == 1 and good["consistency_gate"] == 1 and good["score"] > 0
    missing = ok.replace("Detach BMDCs", "Lift BMDCs")
    bad = score_record({"gold": gold, "prediction": missing})
    assert bad.metrics["consistency_gate"] == 0 and bad.metrics["score"] == 0
    assert bad.breakdown["coverage"] == [pytest.approx(0.8)]
    extra = ok.replace("</orc>", "Step 2: Wash.\n</orc>")
    assert score_record({"gold": gold, "prediction": extra}).metrics["consistency_gate"] == 0
    # Counting key steps against the reference instead (the literal eq. 12 reading).
    two = {"gold": [*gold, s("wash")], "prediction": ok}
    assert score_record(two).metrics["consistency_gate"] == 1
    assert score_record(two, count_check="key_vs_reference").metrics["consistency_gate"] == 0


def test_format_gate_rejects_bad_key_lines_and_order():
    bad_json = (
        "<think></think><key>Step 1: {action: wash}</key><orc>Step 1: Wash.</orc><note></note>"
    )
    assert score_record({"gold": [s("wash")], "prediction": bad_json}).metrics["format_gate"] == 0
    swapped = "<key>Step 1: {}</key><think></think><orc></orc><note></note>"
    assert not parse_answer(swapped).format_ok


def test_gold_as_key_text_and_action_library():
    gold_text = 'Step 1: {"action": "wash", "objects": ["cells"], "parameters": []}'
    rec = {
        "gold": gold_text,
        "prediction": [s("wash", ["cells"]), s("spin")],
        "action_library": ["wash"],
    }
    scored = score_record(rec)
    assert scored.breakdown["n_gold"] == 1 and scored.breakdown["off_library"] == ["spin"]


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"prediction": []}, "gold"),
        ({"gold": [s("wash")], "prediction": 3}, "prediction"),
        ({"gold": [{"objects": []}], "prediction": []}, "gold[0].action"),
        (
            {
                "gold": [s("wash")],
                "prediction": [{"action": "x", "objects": "a", "parameters": [1]}],
            },
            "prediction[0].parameters",
        ),
        ({"gold": "no steps here", "prediction": []}, "gold"),
    ],
)
def test_bad_records_name_the_field(record, field):
    with pytest.raises(RecordError) as caught:
        score_record(record)
    assert caught.value.field == field


def test_bad_options_are_value_errors_naming_the_option():
    pack = get_pack("scirecipe")
    assert pack.options["order_mode"] == "strict" and pack.options["tau"] == 0.95
    rec = {"gold": [s("wash")], "prediction": [s("wash")]}
    with pytest.raises(ValueError, match="order_mode must be one of strict, lcs"):
        pack.score_with(rec, {"order_mode": "fuzzy"})
    with pytest.raises(ValueError, match="unknown option"):
        pack.score_with(rec, {"nope": 1})
    with pytest.raises(ValueError, match="tau must be between 0 and 1"):
        pack.score_with(rec, {"tau": 2})
    with pytest.raises(ValueError, match="decay_lambda must be a number"):
        pack.score_with(rec, {"decay_lambda": "x"})
    assert pack.score_with(rec, {"order_mode": "lcs"}).metrics["r_semantics"] == 2.5


def test_registered_pack():
    pack = get_pack("scirecipe")
    assert pack.metrics[:6] == (
        "score",
        "step_m",
        "order_s",
        "order_lcs",
        "order_tau",
        "semantic_a",
    )
    rows = [
        pack.score(_harvest_record()).metrics,
        pack.score({"gold": GOLD, "prediction": GROK4}).metrics,
    ]
    rows.append(pack.score({"gold": [s("wash")], "prediction": [s("wash")]}).metrics)
    summary = pack.summary(rows)
    assert summary["n"] == 3 and summary["step_m"] == pytest.approx(1 / 3)
    assert summary["format_gate"] == 1.0  # defined on the raw answer only
    assert "level" not in summary
    assert (summary["n_level1"], summary["n_level2"]) == (1, 2)
    assert summary["level1_step_m"] == 1.0 and summary["level2_step_m"] == 0.0
    assert summary["level2_order_lcs"] == pytest.approx((2 / 3 + 6 / 17) / 2)


def test_score_command_round_trip(tmp_path):
    """``manage.py score scirecipe FILE``: the README's record shape in, one line a record out."""
    path = tmp_path / "sci.jsonl"
    lines = [
        {"id": "grok4", "gold": GOLD, "prediction": GROK4},
        {"id": "same", "gold": GOLD, "prediction": GOLD},
    ]
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    out = StringIO()
    call_command(
        "score", "scirecipe", str(path), "--option", "order_lcs_norm=reference", stdout=out
    )
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r.get("id") for r in rows[:2]] == ["grok4", "same"]
    assert rows[0]["order_lcs"] == 0.75 and rows[0]["score"] == 0
    assert rows[1]["score"] == 2.5 and rows[1]["format_gate"] is None
    assert rows[2]["summary"]["n"] == 2 and rows[2]["summary"]["n_level2"] == 2
