"""The escalation report of a study: the threshold equals the statistics run by hand on the same
seeded half, the held-out check on the other half, the items below it; refusals by name."""

from __future__ import annotations

import pytest

from tests.annotation.factories import make_annotation, make_study
from tests.judging.factories import make_judge
from tests.validation.escalation import scenario
from validation.escalation.reads import escalation_report, seeded_halves, study_item_confidences
from validation.escalation.stats import EscalationError, fixed_sequence_threshold, held_out_check

pytestmark = pytest.mark.django_db


@pytest.fixture
def sampled():
    return scenario.build()


def test_the_threshold_is_the_fixed_sequence_test_on_a_seeded_half(sampled):
    study, judge, items = sampled["study"], sampled["judge"], sampled["items"]
    report = escalation_report(study=study, judge=judge, seed=3)
    assert report["items"]["n_labelled"] == scenario.N_LABELLED
    assert report["items"]["n_usable"] == scenario.N_LABELLED
    index = {item.generation_id: i for i, item in enumerate(items)}
    calibration_ids, held_out_ids = seeded_halves(
        [item.generation_id for item in items[: scenario.N_LABELLED]], seed=3
    )
    assert len(calibration_ids) == len(held_out_ids) == scenario.N_LABELLED // 2
    assert not set(calibration_ids) & set(held_out_ids)

    def by_hand(ids):
        return [scenario.confidence_of(index[g]) for g in ids], [
            scenario.judge_right(index[g]) for g in ids
        ]

    expected = fixed_sequence_threshold(*by_hand(calibration_ids), alpha=0.1, delta=0.1)
    assert report["calibration"] == expected.to_json()
    assert report["held_out"] == held_out_check(expected, *by_hand(held_out_ids))
    # the unanimous items pass, the 0.8 group (half of it wrong) fails
    assert report["calibration"]["threshold"] == 1.0
    assert [s["passed"] for s in report["calibration"]["steps"]] == [True, False]
    assert report["held_out"]["agreement_decided"] == 1.0
    assert report["held_out"]["share_decided"] == pytest.approx(
        sum(scenario.confidence_of(index[g]) == 1.0 for g in held_out_ids) / len(held_out_ids)
    )
    escalated = {e["generation_id"] for e in report["escalated"]}
    assert escalated == scenario.expected_escalated(items)
    assert report["study_items"]["n_no_confidence"] == scenario.N_NOT_JUDGED
    assert report["study_items"]["n_escalated"] + report["study_items"]["n_decided"] == len(items)
    other = escalation_report(study=study, judge=judge, seed=4)
    assert other["calibration"]["n_calibration"] == 50 and other["seed"] == 4
    assert other["calibration"]["steps"] != report["calibration"]["steps"]  # another split


def test_item_confidences_from_votes_and_a_tied_vote_takes_the_verdict(sampled):
    items, counts = study_item_confidences(study=sampled["study"], judge=sampled["judge"])
    by_gen = {i.generation_id: i for i in items}
    for i, item in enumerate(sampled["items"][:20]):
        got = by_gen[item.generation_id]
        assert got.confidence == pytest.approx(scenario.confidence_of(i))
        assert (got.answer == got.human) is scenario.judge_right(i)
    assert counts["n_not_judged"] == 0 and counts["n_no_samples"] == 0


def test_refusals_name_the_input(sampled):
    study, judge = sampled["study"], sampled["judge"]
    for kwargs, field in (
        ({"alpha": 0.0}, "alpha"),
        ({"delta": 1.0}, "delta"),
        ({"seed": -1}, "seed"),
        ({"alpha": 0.01, "delta": 0.01}, "items"),  # needs 459 items per half
    ):
        with pytest.raises(EscalationError) as err:
            escalation_report(study=study, judge=judge, **kwargs)
        assert err.value.field == field
    with pytest.raises(EscalationError) as err:
        escalation_report(study=study, judge=make_judge(name="no-samples", model="x"))
    assert err.value.field == "items" and "0 have both" in str(err.value)
    rating = make_study(n_items=2, form_type="rating", form_config={})
    with pytest.raises(EscalationError) as err:
        escalation_report(study=rating, judge=judge)
    assert err.value.field == "study" and "rating study" in str(err.value)


def test_too_few_labelled_items():
    study = make_study(n_items=3)
    for item in study.items.all():
        make_annotation(item=item, annotator="P0", has_failure=False)
    with pytest.raises(EscalationError) as err:
        escalation_report(study=study, judge=make_judge(name="j", model="m"))
    assert "at least 22" in str(err.value) and "(44)" in str(err.value)
