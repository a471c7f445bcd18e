"""The CustomPlans form (notes §2.2–2.3): parsing Yes / error types, refusals naming the
question, majority aggregation, FullyCorrect = both majorities Yes, the Table 2 percentages as
exact k/206, and α per question and per error type."""

import pytest

from annotation.form_types.base import AnnotatedAnswer, ItemView
from annotation.form_types.customplans import item_outcome, outcome_rates
from annotation.form_types.registry import form_for

FORM = form_for("customplans", {})
YES = {"q1": ["yes"], "q2": ["yes"]}


def test_parse_yes_or_error_types():
    answer = FORM.parse({"q1": ["yes"], "q2": ["vague", "missing", "bogus"], "comments": [" ok "]})
    assert answer == {"q1": ["yes"], "q2": ["missing", "vague"], "comments": "ok"}
    assert FORM.errors(answer) == []
    assert FORM.type.has_failure(answer, config=FORM.config) is True
    assert FORM.type.has_failure(YES, config=FORM.config) is False


def test_errors_name_the_question():
    assert FORM.errors(FORM.parse({})) == [
        "Q1 (executable): choose “Yes” or at least one problem.",
        "Q2 (customized): choose “Yes” or at least one problem.",
    ]
    both = FORM.parse({"q1": ["yes", "changed"], "q2": ["yes"]})
    assert FORM.errors(both) == ["Q1 (executable): choose “Yes” or problems, not both."]


def test_majority_and_fully_correct_worked_examples():
    """3 raters. Item 1: Q1 Yes, Yes, changed → EXECUTABLE; Q2 Yes, missing, vague → not
    CUSTOMIZED (1 of 3) → not FULLYCORRECT. Item 2: both questions 2 of 3 Yes → FULLYCORRECT.
    Item 3 (2 raters, tie): 1 of 2 Yes is no majority."""
    item1 = [
        {"q1": ["yes"], "q2": ["yes"]},
        {"q1": ["yes"], "q2": ["missing"]},
        {"q1": ["changed"], "q2": ["vague", "deleted"]},
    ]
    assert item_outcome(item1) == {
        "executable": True,
        "customized": False,
        "fully_correct": False,
        "n": 3,
    }
    item2 = [YES, {"q1": ["yes"], "q2": ["changed"]}, {"q1": ["missing"], "q2": ["yes"]}]
    assert item_outcome(item2)["fully_correct"] is True
    tie = [YES, {"q1": ["vague"], "q2": ["vague"]}]
    assert item_outcome(tie)["executable"] is False
    rates = outcome_rates([item1, item2, tie])
    assert rates["executable"] == {"count": 2, "n": 3, "percent": 66.67}
    assert rates["fully_correct"] == {"count": 1, "n": 3, "percent": 33.33}


def test_table2_sequential_row_is_k_over_206():
    """SEQUENTIAL: FULLYCORRECT 51.94% = 107/206, EXECUTABLE 72.33% = 149/206 (notes §2.2)."""
    items = []
    for i in range(206):
        q1 = ["yes"] if i < 149 else ["changed"]
        q2 = ["yes"] if i < 107 else ["missing"]
        items.append([{"q1": q1, "q2": q2}] * 3)
    rates = outcome_rates(items)
    assert rates["fully_correct"]["percent"] == 51.94
    assert rates["executable"]["percent"] == 72.33
    assert rates["customized"]["percent"] == 51.94


def test_known_answer_and_exports():
    expected = FORM.type.clean_expected({"q1": True, "q2": False}, config=FORM.config)
    assert FORM.matches({"q1": ["yes"], "q2": ["vague"]}, expected)
    assert not FORM.matches(YES, expected)
    row = FORM.type.export_fields({"q1": ["yes"], "q2": ["missing", "vague"]}, config=FORM.config)
    assert row["q1_yes"] is True and row["q2_yes"] is False
    assert row["q2_missing"] and row["q2_vague"] and not row["q2_changed"]


def test_page_context_shows_the_hint_and_five_options():
    ctx = FORM.type.page_context(
        answer={"q2": ["missing"]},
        config=FORM.config,
        item=ItemView(
            goal="Bake bread", l2=["Mix", "Bake"], context={"hint": "I only have a stovetop"}
        ),
    )
    assert ctx["hint"] == "I only have a stovetop"
    q2 = ctx["questions"][1]
    assert [o[0] for o in q2["options"]] == ["yes", "changed", "missing", "deleted", "vague"]
    assert [o[0] for o in q2["options"] if o[2]] == ["missing"]


def test_agreement_per_question_and_error_type():
    rows = []
    # 4 items × 3 raters: Q1 agreed on every item; Q2 split on item 3
    plan = {
        1: [YES, YES, YES],
        2: [{"q1": ["changed"], "q2": ["missing"]}] * 3,
        3: [YES, YES, {"q1": ["yes"], "q2": ["vague"]}],
        4: [{"q1": ["yes"], "q2": ["missing"]}] * 3,
    }
    for item, answers in plan.items():
        rows += [AnnotatedAnswer(item, f"p{k}", a) for k, a in enumerate(answers)]
    report = FORM.agreement(rows, n_resamples=50)
    titles = [s["title"] for s in report["sections"]]
    assert titles == ["Q1 (executable)", "Q2 (customized)", "Majority outcomes (% of items)"]
    q1 = {r["name"]: r for r in report["sections"][0]["rows"]}
    assert q1["α Yes vs No (nominal)"]["stat"]["value"] == pytest.approx(1.0)
    assert "α error type “changed” (nominal)" in q1
    assert q1["α error type “vague” (nominal)"]["stat"]["value"] is None  # never flagged
    q2 = {r["name"]: r for r in report["sections"][1]["rows"]}
    assert q2["α Yes vs No (nominal)"]["stat"]["value"] < 1
    assert report["summary"]["fully_correct"] == {"count": 2, "n": 4, "percent": 50.0}
