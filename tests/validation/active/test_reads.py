"""A study's corrected How2Score from its design (validation.active.reads.study_interval) on
PostgreSQL: the figures equal the pure functions on the labels and verdicts the test planted."""

from __future__ import annotations

import pytest

from annotation.models import StudyItem
from annotation.services.study import study_create
from tests.annotation.factories import make_annotation, make_generations, regular_items
from tests.judging.factories import judged_run, make_judge
from validation.active.reads import study_interval
from validation.active.stats import active_how2score
from validation.ppi.stats import how2score_ppi

pytestmark = pytest.mark.django_db

N_POP, N_STUDY = 40, 12


def _scenario(*, probabilities=None, target=None):
    gens = make_generations(N_POP)
    judge = make_judge(name="active-judge")
    verdicts = [i % 3 == 0 for i in range(N_POP)]
    verdicts[-1] = None  # a parse failure: not in the population
    judged_run(judge, gens, verdicts)
    study = study_create(
        name="planned", generation_ids=[g.pk for g in gens[:N_STUDY]], min_seconds_per_item=0,
        design={"judge": judge.pk, "population": [g.pk for g in gens], "sampling": "uniform"},
        target_half_width=target,
    )  # fmt: skip
    items = regular_items(study)
    if probabilities is not None:
        for item, p in zip(items, probabilities, strict=True):
            StudyItem.objects.filter(pk=item.pk).update(inclusion_probability=p)
    human = {}
    for i, item in enumerate(items[:10]):  # two items stay unlabelled
        says = i % 4 == 0
        human[item.generation_id] = says
        make_annotation(item=item, annotator="P1", has_failure=says)
    make_annotation(item=items[10], annotator="P1", has_failure=True)  # a tie: no majority
    make_annotation(item=items[10], annotator="P2", has_failure=False)
    judge_of = {g.pk: int(v) for g, v in zip(gens, verdicts, strict=True) if v is not None}
    return study, gens, human, judge_of


def test_a_uniform_design_is_ppi_on_the_labelled_against_the_rest():
    study, _, human, judge_of = _scenario()
    got = study_interval(study)
    labelled = sorted(human)
    expected = how2score_ppi(
        human=[int(human[g]) for g in labelled],
        judge=[judge_of[g] for g in labelled],
        unlabelled=[v for g, v in judge_of.items() if g not in human],
    )
    assert got["ci"] == pytest.approx(expected["ci"])
    assert got["how2score"] == pytest.approx(expected["how2score"])
    assert got["n_labels"] == 10 and got["n_population"] == N_POP - 1
    assert got["sampling"] == "uniform" and got["target"] is None and not got["reached"]


def test_an_active_design_weights_each_label_by_its_probability():
    probabilities = [0.2 + 0.05 * i for i in range(N_STUDY)]
    study, gens, human, judge_of = _scenario(probabilities=probabilities, target=0.45)
    got = study_interval(study)
    pi_of = {g.pk: p for g, p in zip(gens[:N_STUDY], probabilities, strict=True)}
    labelled = sorted(human)
    expected = active_how2score(
        human=[int(human[g]) for g in labelled],
        judge_labelled=[judge_of[g] for g in labelled],
        probabilities=[pi_of[g] for g in labelled],
        judge_all=list(judge_of.values()),
    )
    assert got["ci"] == pytest.approx(expected["ci"])
    assert got["uniform_half_width"] == pytest.approx(expected["uniform_half_width"])
    assert got["sampling"] == "uncertainty" and "inverse of their probability" in got["method"]
    # wide enough, but 10 labels are under the rule's floor of 100: not reached
    assert got["half_width"] <= 0.45 and not got["reached"]


def test_a_study_not_made_from_a_plan_says_why():
    gens = make_generations(3)
    study = study_create(name="by hand", generation_ids=[g.pk for g in gens])
    got = study_interval(study)
    assert got["how2score"] is None and "not made from a plan" in got["undefined"]
    assert got["reached"] is False


def test_the_figure_is_computed_again_only_when_labels_or_verdicts_change(monkeypatch):
    from validation.active import reads

    study, gens, _, _ = _scenario()
    calls = []
    computed = reads._computed
    monkeypatch.setattr(reads, "_computed", lambda *a: calls.append(1) or computed(*a))
    first = study_interval(study)
    assert study_interval(study) == first and len(calls) == 1
    make_annotation(item=regular_items(study)[11], annotator="P1", has_failure=True)
    again = study_interval(study)
    assert len(calls) == 2 and again["n_labels"] == first["n_labels"] + 1
    other = make_judge(name="other-judge", model="another-model")
    judged_run(other, gens[:2], [True, False])  # another judge's verdicts: no new computation
    study_interval(study)
    assert len(calls) == 2
