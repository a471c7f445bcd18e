"""Metric ↔ human validation on PostgreSQL studies of each kind (critical failure, rating,
pairwise), a scorer pack's metric stored on the generations as a scoring run stores it."""

from __future__ import annotations

import pytest

from annotation.services.study import study_create
from benchmarks.models import Generation, Generator
from tests.annotation.factories import make_annotation, make_generations, regular_items
from tests.judging.factories import set_metric
from validation.metric_validation.reads import metric_validation, metrics_on_study


def test_critical_failure_study_detector(scenario):
    # human majority T T T F F (tie); scores: flagged 0.1 0.7 0.5, unflagged 0.6 0.9
    for g, v in zip(scenario["gens"], [0.1, 0.7, 0.5, 0.6, 0.9, 0.2], strict=True):
        set_metric(g, v)
    report = metric_validation(
        study=scenario["study"], pack="scirecipe", metric="score", n_resamples=200
    )
    assert report["items"] == {"n_labelled": 6, "n_tied": 1, "n_no_metric": 0}
    d = report["detector"]
    assert d["auc"]["value"] == pytest.approx(5 / 6)
    assert d["threshold"] == pytest.approx((1.3 / 3 + 0.75) / 2)
    assert (d["precision"]["value"], d["recall"]["value"]) == (1.0, pytest.approx(2 / 3))
    assert d["auc"]["ci"]["n_resamples"] == 200
    chosen = metric_validation(
        study=scenario["study"], pack="scirecipe", metric="score", threshold=0.8, n_resamples=0
    )
    assert chosen["detector"]["recall"]["value"] == 1.0
    assert chosen["detector"]["precision"]["value"] == pytest.approx(3 / 4)
    assert metrics_on_study(study=scenario["study"]) == [("scirecipe", "score")]
    # a metric nobody computed: every item counted as without it, statistics undefined
    none = metric_validation(study=scenario["study"], pack="procbench", metric="pa")
    assert none["items"]["n_no_metric"] == 5 and none["detector"]["auc"]["value"] is None


@pytest.mark.django_db
def test_rating_study_kappa_per_dimension():
    gens = make_generations(6)
    config = {
        "points": 3,
        "low": 0,
        "dimensions": [{"key": "overall", "label": "Overall"}, {"key": "order", "label": "Order"}],
    }
    study = study_create(
        name="ratings",
        generation_ids=[g.pk for g in gens],
        form_type="rating",
        form_config=config,
        min_seconds_per_item=0,
    )
    items = regular_items(study)
    # metric → categories with cuts 0.3, 0.6: [0, 1, 2, 0, 2, 1];
    # overall ratings (two raters) → means [0, 1.5, 2, 1, 1.5, 1] → rounded [0, 2, 2, 1, 2, 1]
    metric = [0.1, 0.5, 0.9, 0.2, 0.8, 0.5]
    overall = [(0, 0), (1, 2), (2, 2), (1, 1), (1, 2), (1, 1)]
    for item, value, (r1, r2) in zip(items, metric, overall, strict=True):
        set_metric(item.generation, value)
        make_annotation(item=item, annotator="P1", label={"ratings": {"overall": r1, "order": 0}})
        make_annotation(item=item, annotator="P2", label={"ratings": {"overall": r2, "order": 0}})
    report = metric_validation(
        study=study,
        pack="scirecipe",
        metric="score",
        rule="thresholds",
        cuts=[0.3, 0.6],
        n_resamples=100,
    )
    dims = {d["key"]: d for d in report["dimensions"]}
    assert dims["overall"]["kappa"]["value"] == pytest.approx(0.5)  # as the pure unit test
    assert dims["overall"]["n"] == 6 and dims["overall"]["scale"] == [0, 1, 2]
    # every order rating 0: the metric's 2 items in category 0 agree, as chance predicts → κ 0
    assert dims["order"]["kappa"]["value"] == pytest.approx(0.0)
    assert dims["order"]["confusion"][0][0] == 2
    one = metric_validation(
        study=study, pack="scirecipe", metric="score", dimension="overall", n_resamples=0
    )
    assert [d["key"] for d in one["dimensions"]] == ["overall"]
    assert one["dimensions"][0]["rule"] == "quantiles"
    with pytest.raises(ValueError, match="dimension: the study has no rating dimension 'x'"):
        metric_validation(study=study, pack="scirecipe", metric="score", dimension="x")


@pytest.mark.django_db
def test_pairwise_study_agreement_and_tau():
    firsts = make_generations(5)
    second = Generator.objects.create(name="system-b")
    pairs = []
    for g in firsts:
        pairs.append(Generation.objects.create(procedure=g.procedure, generator=second))
    study = study_create(
        name="pairs",
        generation_ids=[],
        pairs=[[a.pk, b.pk] for a, b in zip(firsts, pairs, strict=True)],
        form_type="pairwise",
        min_seconds_per_item=0,
    )
    items = regular_items(study)
    # (metric first, metric second, votes) → majorities first, second, second, first, tie
    plan = [
        (0.9, 0.1, ["first", "first"]),
        (0.2, 0.8, ["second", "second"]),
        (0.5, 0.4, ["second", "second", "first"]),
        (0.3, 0.3, ["first"]),
        (0.6, 0.2, ["first", "second"]),
    ]
    for item, b, (ma, mb, votes) in zip(items, pairs, plan, strict=True):
        assert item.generation_b_id == b.pk
        set_metric(item.generation, ma)
        set_metric(b, mb)
        for k, vote in enumerate(votes):
            make_annotation(
                item=item, annotator=f"P{k}", label={"preferred": vote, "shown": "A", "order": "AB"}
            )
    report = metric_validation(study=study, pack="scirecipe", metric="score", n_resamples=100)
    result = report["pairwise"]
    assert result["agreement"]["value"] == pytest.approx(0.5)
    assert result["kendall_tau"]["value"] == pytest.approx(0.25)
    assert report["items"] == {"n_unlabelled": 0, "n_no_metric": 0}


@pytest.mark.django_db
def test_form_type_without_an_analysis_is_refused():
    gens = make_generations(1)
    study = study_create(
        name="solve", generation_ids=[gens[0].pk], form_type="customplans", min_seconds_per_item=0
    )
    with pytest.raises(ValueError, match="form type 'customplans' has no metric↔human analysis"):
        metric_validation(study=study, pack="customplans", metric="executable")
