"""LongProc scorers (notes §1.2): the Countdown F.5 / G.4 examples of seed 001, row-level F1,
exact trace match, tag extraction that keeps <think>, termination (Travel: test_longproc_travel)."""

import pytest

from benchmarks.packs import longproc, longproc_answers
from benchmarks.packs.longproc_validators import validate_countdown
from benchmarks.packs.registry import get_pack

from .test_longproc_travel import F6, F6_PLAN, travel

F5_OUTPUT = """Initial number set: [44, 48, 35, 6], target: 25. ...
- Try $48 - 44 = 4$. Add 4 to the number set. Current number set: [4, 35, 6], target: 25.
  - Try $35 - 4 = 31$. Add 31 to the number set. Current number set: [31, 6], target: 25.
    - Try $31 - 6 = 25$. Evaluate $25 = 25$, target found!
Output the solution in the required format:
<Solution>

48 - 44 = 4

35 - 4 = 31

31 - 6 = 25

</Solution>"""

G4_GOLD = "<Solution>\n\n$30 + 6 = 36$\n\n$36 * 6 = 216$\n\n$216 / 8 = 27$\n\n</Solution>"


def countdown(prediction, numbers=(44, 48, 35, 6), target=25, **extra):
    record = {"id": "c", "numbers": list(numbers), "target": target, "prediction": prediction}
    return get_pack("longproc-countdown").score({**record, **extra})


def test_countdown_f5_is_valid():
    scored = countdown(F5_OUTPUT)
    assert scored.metrics == {"correct": 1}
    assert [e["equation"] for e in scored.breakdown["equations"]] == [
        "48 - 44 = 4",
        "35 - 4 = 31",
        "31 - 6 = 25",
    ]
    assert scored.breakdown["errors"] == [] and scored.breakdown["remaining"] == [25]


def test_countdown_g4_no_solution_scores_zero_and_the_gold_is_valid():
    g4 = {"numbers": (30, 6, 8, 6), "target": 27}
    scored = countdown("... drop this branch.\nNo feasible solution found.", **g4)
    assert scored.metrics == {"correct": 0}
    assert scored.breakdown["errors"] == ["no <Solution> block"]
    assert countdown(G4_GOLD, **g4).metrics == {"correct": 1}  # $…$ and 6 used twice (given twice)


@pytest.mark.parametrize(
    ("solution", "error"),
    [
        ("48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 24", "equation 3: 31 - 6 is 25, not 24"),
        ("48 - 44 = 4\n35 - 4 = 31\n6 - 31 = 25", "equation 3: 6 - 31 is -25, not 25"),
        ("48 - 44 = 4\n35 - 4 = 31\n31 - 35 = 25", "equation 3: 35 is not available"),
        ("48 - 44 = 4\n35 - 4 = 31\n31 - 7 = 24", "equation 3: 7 is not available"),
        ("48 - 44 = 4\n4 - 4 = 0\n", "equation 2: 4 is not available"),
        ("48 - 44 = 4\n35 - 4 = 31", "the last result is 31, not the target 25"),
        ("48 + 35 = 83\n83 - 6 = 77\n77 - 52 = 25", "equation 3: 52 is not available"),
        ("48 - 44 = 4\nthen 35 - 4 = 31\n31 - 6 = 25", "equation 2: not an equation"),
        ("35 / 6 = 5\n48 - 44 = 4\n", "equation 1: 35 / 6 is 5.833333333333333, not 5"),
    ],
)
def test_countdown_rules(solution, error):
    ok, breakdown = validate_countdown(solution, [44, 48, 35, 6], 25)
    assert not ok
    assert any(e.startswith(error) for e in breakdown["errors"]), breakdown["errors"]


def test_countdown_unused_number_and_max_intermediate_option():
    ok, breakdown = validate_countdown("48 - 44 = 4\n35 - 4 = 31", [44, 48, 35, 6], 31)
    assert not ok and breakdown["errors"] == ["not every given number is used exactly once"]
    big = "50 * 50 = 2500\n2500 / 50 = 50\n50 - 25 = 25"
    assert validate_countdown(big, [50, 50, 50, 25], 25)[0]
    ok, breakdown = validate_countdown(big, [50, 50, 50, 25], 25, max_intermediate=2000)
    assert not ok and breakdown["errors"] == ["equation 1: the result exceeds 2000"]
    assert get_pack("longproc-countdown").score_with(
        {"numbers": [50, 50, 50, 25], "target": 25, "prediction": f"<Solution>{big}</Solution>"},
        {"max_intermediate": 2000},
    ).metrics == {"correct": 0}


def test_extraction_keeps_think_content_and_takes_the_last_block():
    inside_think = "<think>so:\n<Solution>\n48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25\n</Solution>\n"
    assert countdown(inside_think + "</think>").metrics["correct"] == 1
    assert countdown(inside_think + "</think>", think="strip").metrics["correct"] == 1
    pack = get_pack("longproc-countdown")
    record = {"numbers": [44, 48, 35, 6], "target": 25, "prediction": inside_think + "</think>"}
    assert pack.score_with(record, {"think": "strip"}).metrics["correct"] == 0
    draft_then_answer = "<Solution>1 + 1 = 2</Solution> wait, no. " + F5_OUTPUT
    assert countdown(draft_then_answer).metrics["correct"] == 1
    assert (
        pack.score_with(
            {**record, "prediction": draft_then_answer}, {"occurrence": "first"}
        ).metrics["correct"]
        == 0
    )
    assert (
        longproc_answers.extract_tagged(
            "<solving procedure>x</Solving  Procedure>", "Solving Procedure"
        )
        == "x"
    )
    assert longproc_answers.extract_tagged("<Plan>unclosed", "Plan") is None


# --- trace match, row F1, termination ----------------------------------------------------------


def test_normalisation_and_exact_trace_match():
    assert (
        longproc_answers.normalize("  From Paris,  take a TRAIN to Rome.\n")
        == "from paris take a train to rome"
    )
    assert longproc_answers.normalize("The cat", articles=True) == "cat"
    gold = "From Paris, take a train to Rome.\nFrom Rome, take a bus to Oslo."
    pack = get_pack("longproc-path-traversal")
    same = pack.score(
        {"id": 1, "gold": gold, "prediction": f"<think>hm</think><Route>\n{gold.upper()}\n</Route>"}
    )
    assert same.metrics == {"correct": 1} and same.breakdown["first_divergence"] is None
    wrong = gold.replace("bus", "ferry")
    diff = pack.score(
        {"id": 1, "gold": gold, "prediction": f"<Route>{wrong}</Route>", "finish_reason": "stop"}
    )
    assert (
        diff.metrics == {"correct": 0, "terminated": 1} and diff.breakdown["first_divergence"] == 2
    )
    short = pack.score(
        {"id": 1, "gold": gold, "prediction": "<Route>From Paris, take a train to Rome.</Route>"}
    )
    assert short.breakdown["first_divergence"] == 2 and short.breakdown["n_pred"] == 1
    assert pack.score({"id": 1, "gold": gold, "prediction": gold}).breakdown["extracted"] is False


def test_tom_trace_match():
    gold = (
        "- Step 1: (Amy location changed; ball location unchanged) {Amy location: kitchen}\n"
        "- Step 2: (Amy location unchanged; ball location changed) {Amy location: kitchen}\n"
        "Final Answer: the kitchen's box"
    )
    pred = "<think>\n- Step 1: draft\n</think>\nHere is the trace:\n" + gold + "\nDone."
    pack = get_pack("longproc-tom-tracking")
    assert pack.score({"gold": gold, "prediction": pred}).metrics == {"correct": 1}
    wrong = pred.replace("Final Answer: the kitchen's box", "Final Answer: the hall")
    assert pack.score({"gold": gold, "prediction": wrong}).breakdown["first_divergence"] == 3


GOLD_TSV = "Title\tYear\nAlpha\t2001\nBeta\t2002\nGamma\t2003\nDelta\t2004"


def test_row_f1_multiset_header_excluded_order_ignored():
    pack = get_pack("longproc-html-to-tsv")
    # G.1-style: the model copies the first rows and skips the rest; order does not matter.
    pred = "```tsv\nTitle\tYear\nbeta\t2002.\nAlpha\t2001\n```"
    scored = pack.score({"id": "h", "gold": GOLD_TSV, "prediction": pred})
    assert scored.metrics == pytest.approx({"f1": 2 / 3, "precision": 1.0, "recall": 0.5})
    assert scored.breakdown == {
        "extracted": True,
        "gold_rows": 4,
        "predicted_rows": 2,
        "correct_rows": 2,
    }
    # A duplicated row counts once (multiset); as a set it collapses and counts as one prediction.
    dup = "```tsv\nTitle\tYear\nAlpha\t2001\nAlpha\t2001\nBeta\t2002\nZeta\t9\n```"
    assert pack.score({"gold": GOLD_TSV, "prediction": dup}).metrics == pytest.approx(
        {"f1": 0.5, "precision": 0.5, "recall": 0.5}
    )
    as_set = pack.score_with({"gold": GOLD_TSV, "prediction": dup}, {"matching": "set"})
    assert as_set.metrics == pytest.approx({"f1": 4 / 7, "precision": 2 / 3, "recall": 0.5})
    # Header included: the matching header row counts as one more correct row.
    with_header = pack.score_with({"gold": GOLD_TSV, "prediction": pred}, {"header": "include"})
    assert with_header.metrics == pytest.approx({"f1": 0.75, "precision": 1.0, "recall": 0.6})
    # A row with a wrong column is wrong; no block is F1 = 0.
    assert longproc.row_f1([("a", "1")], [("a", "2")])["f1"] == 0.0
    assert pack.score({"gold": GOLD_TSV, "prediction": "Alpha\t2001"}).metrics["f1"] == 0.0
    assert longproc.row_f1([], [])["f1"] == 1.0


def test_termination_table5():
    # Table 5, Travel 8K: Qwen2.5-32B-Inst acc 5 / term 82 / acc-per-term 6;
    # R1-Distill-Qwen-32B 22 / 36 / 61 (100 items each).
    def rows(correct, term):
        out = [{"correct": 1, "terminated": 1}] * correct + [{"correct": 0, "terminated": 1}] * (
            term - correct
        )
        return out + [{"correct": 0, "terminated": 0}] * (100 - term)

    qwen = longproc.termination_summary(rows(5, 82))
    assert (round(100 * qwen["acc"]), round(100 * qwen["term"]), round(100 * qwen["acc_term"])) == (
        5,
        82,
        6,
    )
    r1 = longproc.termination_summary(rows(22, 36))
    assert (round(100 * r1["acc"]), round(100 * r1["term"]), round(100 * r1["acc_term"])) == (
        22,
        36,
        61,
    )
    assert longproc.terminated("stop") == 1 and longproc.terminated("length") == 0
    assert longproc.terminated("end_turn") == 1 and longproc.terminated(None) is None
    summary = get_pack("longproc-countdown").summary(
        [
            {"correct": 1, "terminated": 1},
            {"correct": 0, "terminated": 0},
            {"correct": 0, "terminated": None},
        ]
    )
    assert summary == {"correct": 1 / 3, "n": 3, "term": 0.5, "acc_term": 1.0}
    assert get_pack("longproc-countdown").summary([{"correct": 1}]) == {"correct": 1.0, "n": 1}


def test_level_averages():
    # GPT-4o 0.5K: (87 + 90 + 98 + 100 + 99) / 5 = 94.8; 8K: (65.45 + 34 + 0 + 67 + 24) / 5 = 38.09.
    half_k = {"html": 87, "pseudo": 90, "path": 98, "tom": 100, "countdown": 99}
    assert longproc.level_average(half_k) == pytest.approx(94.8)
    eight_k = {"html": 65.45, "path": 34, "tom": 0, "countdown": 67, "travel": 24}
    assert round(longproc.level_average(eight_k), 1) == 38.1


def test_countdown_accepts_common_equation_writing():
    written = "- $48 − 44 = 4$\n* 35 - 4 = 31.\n3. \\(31 \\times 1 = 31\\)"
    ok, breakdown = validate_countdown(written, [44, 48, 35, 1], 31)
    assert ok, breakdown["errors"]
    assert validate_countdown("62 ÷ 2 = 31\n31 × 1 = 31", [62, 2, 1], 31)[0]


def test_fallback_option_scores_an_untagged_answer():
    typed = "48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25"
    assert countdown(typed).metrics == {"correct": 0}
    record = {"numbers": [44, 48, 35, 6], "target": 25, "prediction": typed}
    pack = get_pack("longproc-countdown")
    assert pack.score_with(record, {"fallback": "whole"}).metrics == {"correct": 1}
    plan = F6_PLAN.replace("<Plan>", "").replace("</Plan>", "")
    assert travel(F6, plan).metrics == {"correct": 0}
    assert travel(F6, plan, fallback="whole").metrics == {"correct": 1}
    route = get_pack("longproc-path-traversal")
    gold = "From Paris, take a train to Rome."
    assert route.score_with({"gold": gold, "prediction": gold}, {"fallback": "whole"}).metrics == {
        "correct": 1
    }
    for name in (
        "longproc-countdown",
        "longproc-travel",
        "longproc-path-traversal",
        "longproc-tom-tracking",
    ):
        assert get_pack(name).options["fallback"] == "none"
    with pytest.raises(ValueError, match="fallback"):
        pack.score_with(record, {"fallback": "maybe"})
