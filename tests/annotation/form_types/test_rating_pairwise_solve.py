"""The rating-scale, pairwise-preference and solve form types (pure): parsing, refusals,
known answers, exports and their agreement levels."""

import pytest

from annotation import agreement as ag
from annotation.form_types.base import AnnotatedAnswer, ItemView
from annotation.form_types.pairwise import preferred_system, shown_swapped
from annotation.form_types.registry import form_for
from annotation.form_types.solve import score_answer
from tests.annotation.form_types import packs  # noqa: F401  (registers test-exact)

SCIRECIPE = form_for("rating", {"preset": "scirecipe"})


def test_rating_defaults_and_preset():
    plain = form_for("rating", {})
    assert plain.config["points"] == 5 and plain.config["low"] == 0
    assert [d["key"] for d in plain.config["dimensions"]] == ["overall"]
    assert [d["key"] for d in SCIRECIPE.config["dimensions"]] == [
        "granularity",
        "order",
        "semantic",
        "overall",
    ]
    seven = form_for("rating", {"points": 7, "low": 1, "dimensions": [{"key": "q", "label": "Q"}]})
    assert seven.type.scale(seven.config) == [1, 2, 3, 4, 5, 6, 7]


def test_rating_parse_errors_and_known_answer():
    answer = SCIRECIPE.parse({"r-granularity": ["4"], "r-order": ["9"], "r-semantic": ["x"]})
    assert answer["ratings"] == {"granularity": 4}
    assert SCIRECIPE.errors(answer) == [
        "Operational order: choose a rating from 0 to 4.",
        "Semantic clarity: choose a rating from 0 to 4.",
        "Overall (fluency and executability): choose a rating from 0 to 4.",
    ]
    full = SCIRECIPE.parse(
        {f"r-{k}": ["2"] for k in ("granularity", "order", "semantic", "overall")}
    )
    assert SCIRECIPE.errors(full) == []
    expected = SCIRECIPE.type.clean_expected({"ratings": {"overall": 2}}, config=SCIRECIPE.config)
    assert SCIRECIPE.matches(full, expected)
    assert not SCIRECIPE.matches(answer, expected)
    with pytest.raises(ValueError, match="not on the 0–4 scale"):
        SCIRECIPE.type.clean_expected({"ratings": {"overall": 5}}, config=SCIRECIPE.config)
    assert SCIRECIPE.type.export_fields(full, config=SCIRECIPE.config)["rating_order"] == 2


def test_rating_agreement_reports_ordinal_interval_alpha_and_weighted_kappa():
    data = {  # item: three raters' overall ratings
        1: [4, 4, 3],
        2: [0, 1, 0],
        3: [2, 2, 2],
        4: [3, 4, 4],
        5: [1, 1, 0],
    }
    form = form_for("rating", {})
    answers = [
        AnnotatedAnswer(i, f"r{k}", {"ratings": {"overall": v}})
        for i, values in data.items()
        for k, v in enumerate(values)
    ]
    report = form.agreement(answers, n_resamples=100)
    rows = {r["name"]: r for r in report["sections"][0]["rows"]}
    matrix = ag.LabelMatrix.from_rows(list(data.values()), categories=range(5))
    assert rows["Krippendorff α (ordinal)"]["stat"]["value"] == pytest.approx(
        ag.krippendorff_alpha(matrix, level="ordinal")
    )
    assert rows["Krippendorff α (interval)"]["stat"]["value"] == pytest.approx(
        ag.krippendorff_alpha(matrix, level="interval")
    )
    assert (
        rows["Krippendorff α (interval)"]["ci"]["low"]
        <= rows["Krippendorff α (interval)"]["stat"]["value"]
    )
    assert rows["Weighted κ (quadratic, mean over pairs)"]["stat"]["value"] == pytest.approx(
        ag.mean_pairwise_weighted_kappa(matrix)
    )
    assert rows["Weighted κ (quadratic, mean over pairs)"]["stat"]["value"] > 0.8
    assert rows["Mean rating"]["stat"]["value"] == pytest.approx(31 / 15)
    assert report["summary"]["overall"]["n"] == 15


def test_pairwise_order_is_a_fixed_coin_per_participant_and_recorded():
    flips = [shown_swapped(participant_id=p, item_id=7) for p in range(200)]
    assert 60 < sum(flips) < 140  # both orders happen
    assert flips == [shown_swapped(participant_id=p, item_id=7) for p in range(200)]
    assert preferred_system("A", swapped=False) == "first"
    assert preferred_system("A", swapped=True) == "second"
    assert preferred_system("B", swapped=True) == "first"
    assert preferred_system("tie", swapped=True) == "tie"
    form = form_for("pairwise", {})
    item = ItemView(goal="g", l2=["first system"], l2_b=["second system"], swapped=True)
    answer = form.parse({"pref": ["A"]}, item)
    assert answer["preferred"] == "second" and answer["order"] == "ba" and answer["shown"] == "A"
    ctx = form.type.page_context(answer=answer, config=form.config, item=item)
    assert ctx["sides"] == [("A", ["second system"]), ("B", ["first system"])]
    assert form.errors(form.parse({}, item)) == ["Preference: choose A, B or tie."]
    unpaired = ItemView(goal="g", l2=["first system"])
    assert "no second procedure" in form.errors(form.parse({"pref": ["A"]}, unpaired), unpaired)[0]
    no_tie = form_for("pairwise", {"allow_tie": False})
    assert no_tie.parse({"pref": ["tie"]}, item)["preferred"] is None
    assert no_tie.errors(no_tie.parse({"pref": ["tie"]}, item)) == ["Preference: choose A or B."]


def test_pairwise_agreement():
    prefs = {
        1: ["first", "first", "first"],
        2: ["second", "second", "first"],
        3: ["tie", "first", "second"],
    }
    answers = [
        AnnotatedAnswer(i, f"p{k}", {"preferred": v})
        for i, vs in prefs.items()
        for k, v in enumerate(vs)
    ]
    report = form_for("pairwise", {}).agreement(answers, n_resamples=50)
    rows = {r["name"]: r for r in report["sections"][0]["rows"]}
    # agreeing pairs: item 1: 3/3, item 2: 1/3, item 3: 0/3 → 4/9
    assert rows["Pairwise percent agreement"]["stat"]["value"] == pytest.approx(4 / 9)
    assert "Krippendorff α (nominal)" in rows
    assert report["summary"]["majority_wins"] == {"first": 1, "second": 1, "tie": 0}
    assert report["summary"]["n_items_decided"] == 2


def test_solve_scores_with_the_pack_and_reports_missing_packs():
    form = form_for("solve", {"pack": "test-exact"})
    item = ItemView(goal="g", context={"prompt": "2+2?", "record": {"id": "a", "target": 4}})
    answer = form.parse({"answer": [" 4 "]}, item)
    assert form.errors(answer) == []
    assert form.errors(form.parse({"answer": ["  "]}, item)) == ["Answer: write your answer."]
    stored = form.type.finalize(answer, config=form.config, item=item)
    assert stored["metrics"] == {"correct": 1} and stored["scorer"] == "test-exact"
    wrong = form.type.finalize(form.parse({"answer": ["5"]}, item), config=form.config, item=item)
    assert wrong["metrics"] == {"correct": 0}
    assert form.type.has_failure(wrong, config=form.config) is True
    bad = form.type.finalize(answer, config=form.config, item=ItemView(goal="g"))
    assert bad["score_error"] == "ValueError: target: missing"
    gone = score_answer(pack_name="not-installed", record={}, answer_field="prediction", answer="x")
    assert "scorer pack 'not-installed' is not available" in gone["score_error"]
    answers = [
        AnnotatedAnswer(1, "p1", stored),
        AnnotatedAnswer(2, "p1", wrong),
        AnnotatedAnswer(3, "p1", bad),
    ]
    report = form.agreement(answers)
    rows = {r["name"]: r for r in report["sections"][0]["rows"]}
    assert rows["Human correct (mean)"]["stat"]["value"] == pytest.approx(0.5)
    assert rows["Answers not scored"]["stat"]["value"] == 1
    assert report["summary"]["n_scored"] == 2
