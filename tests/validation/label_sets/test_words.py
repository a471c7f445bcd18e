"""The verdicts in words (validation.alt_test.words, validation.ppi.words): the sentence to
paste, the bias, why a corrected score lies outside its inputs, what cannot be computed and
why. Pure."""

from __future__ import annotations

from validation.alt_test.stats import alt_test
from validation.alt_test.words import epsilon_said, power_sentence, verdict_sentence
from validation.ppi.stats import NO_UNLABELLED, how2score_ppi
from validation.ppi.words import outside_note, ppi_sentences


def test_epsilon_is_said_with_its_origin():
    assert (
        epsilon_said(0.15, "skilled")
        == "ε = 0.15 (the alt-test paper's value for skilled annotators)"
    )
    assert epsilon_said(0.12, "crowd") == "ε = 0.12 (chosen)"


def test_alt_test_sentence_when_it_cannot_be_computed():
    r = alt_test(humans={"a": {1: 1, 2: 0}, "b": {1: 1, 2: 1}}, judge={1: 1, 2: 0}).to_json()
    sentence = verdict_sentence(r, judge="Judge-X")
    assert sentence.startswith("The alt-test of Judge-X cannot be computed: no annotator has 30")
    assert "(the most any annotator has is 2)" in sentence
    estimate = {"n_items": 80, "n_categories": 2, "n_annotators": 2, "largest": 200}
    assert "This may be for lack of items: each annotator has 2 or more" in power_sentence(
        r, estimate
    )
    assert "expects a pass from about 80 items" in power_sentence(r, estimate)
    assert "does not expect it to pass within 200" in power_sentence(
        r, {**estimate, "n_items": None}
    )


def test_a_passing_judge_needs_no_power_sentence():
    humans = {a: {i: i % 2 for i in range(40)} for a in ("a", "b", "c")}
    r = alt_test(humans=humans, judge={i: i % 2 for i in range(40)}, epsilon=0.2).to_json()
    assert r["passed"]
    assert "x may replace the annotators: it won against 3 of 3" in verdict_sentence(r, judge="x")
    assert (
        power_sentence(r, {"n_items": 30, "n_categories": 2, "n_annotators": 3, "largest": 200})
        == ""
    )


def test_ppi_outside_both_inputs_is_explained():
    """People see failures on 2 of 10 labelled items, the judge on 4 of them (it over-calls);
    on the 90 other items it calls 2: judge-only 94%, human-only 80%, corrected above both."""
    human = [1, 1] + [0] * 8
    judge = [1, 1, 1, 1] + [0] * 6
    r = how2score_ppi(human=human, judge=judge, unlabelled=[1, 1] + [0] * 88)
    assert r["how2score"] > max(r["judge_only_how2score"], r["human_only_how2score"])
    sentences = ppi_sentences(r, judge="j", group="m")
    assert sentences[0].startswith("Corrected with 10 items labelled by people, m's How2Score")
    assert (
        "finds failures people do not on 20% of items and misses failures they find on 0%"
        in sentences[1]
    )
    assert "about 20 points low there" in sentences[1]
    assert sentences[2] == outside_note(r) and "outside both inputs" in sentences[2]


def test_ppi_with_only_labelled_items_says_what_it_needs():
    r = how2score_ppi(human=[0, 1, 0], judge=[0, 1, 1], unlabelled=[])
    assert r["undefined"] == NO_UNLABELLED
    (first, _) = ppi_sentences(r, judge="j")
    assert first.startswith("No corrected score for the How2Score judged by j: no unlabelled")
    assert "PPI needs the judge's verdicts on items people did not label" in first
    assert "0.000" not in first
