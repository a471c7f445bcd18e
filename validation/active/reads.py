"""A study's corrected How2Score now, from how its items were chosen (``Study.design``) and the
labels it holds: the figure the width rule watches and the report shows.

``Study.design`` keys: ``judge`` (a :class:`judging.models.Judge` pk), ``population`` (the
generation ids the judge scored that the study's items were drawn from), ``sampling``
(``uniform`` or ``uncertainty``), ``mix``, ``seed``, ``plan`` (the plan's numbers), ``label_set``.

Labelled: the study's regular items with a clear human majority and a verdict of the judge
(an item whose annotators tie has no majority: it counts as unlabelled, as everywhere else).
Population: the design's generations with a parsed verdict of the judge. A study whose items
carry an inclusion probability (drawn where the judge is unsure) is corrected with
:func:`validation.active.stats.active_how2score`; any other with uniform PPI++
(:func:`validation.ppi.stats.how2score_ppi`, the labelled items against the rest).
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from annotation.models import Annotation, Study, StudyItem
from judging.models import Judge, JudgeRunItem
from judging.selectors.judgments import score_records
from judging.selectors.verdicts import study_majority
from validation.active.stats import active_how2score, half_width, target_reached
from validation.ppi.stats import how2score_ppi

UNIFORM = "PPI++ on a uniform sample (ppi-python, power-tuned λ), 95% normal interval"
ACTIVE = (
    "active inference: labels drawn where the judge is unsure, weighted by the inverse of their "
    "probability (ppi-python with sample weights, power-tuned λ), 95% normal interval"
)


def _undefined(study: Study, reason: str) -> dict[str, Any]:
    return {
        "undefined": reason,
        "how2score": None,
        "ci": None,
        "half_width": None,
        "n_labels": 0,
        "target": study.target_half_width,
        "reached": False,
    }


def _population_verdicts(judge: Judge, population: set[int]) -> dict[int, int]:
    return {
        rec["generation_id"]: int(bool(rec["has_failure"]))
        for rec in score_records(judge=judge, generator=None, run=None, dataset=None)
        if rec["generation_id"] in population and not rec["parse_failed"]
    }


def _fingerprint(study: Study, judge: Judge) -> str:
    """What the figure depends on, read cheaply: the study's labels (how many, the last change)
    and the judge's verdicts (the newest run item), so a panel that asks every few seconds
    computes only when something changed."""
    labels = Annotation.objects.filter(item__study=study).aggregate(
        n=Count("id"), last=Max("submitted_at")
    )
    verdicts = JudgeRunItem.objects.filter(judgment__judge_key=judge.judge_id).aggregate(
        last=Max("id")
    )
    population = len(study.design.get("population") or ())
    return (
        f"study-interval:v1:{study.pk}:{judge.pk}:{population}:{labels['n']}:"
        f"{labels['last'].isoformat() if labels['last'] else '-'}:{verdicts['last']}"
    )


def study_interval(study: Study) -> dict[str, Any]:
    """The study's corrected How2Score, its 95% interval and half-width, whether the target is
    reached (module docstring); ``undefined`` with the reason when it cannot be computed. The
    computation is cached until the study's labels or the judge's verdicts change."""
    design = study.design or {}
    judge = Judge.objects.filter(pk=design.get("judge")).first()
    if judge is None or not design.get("population"):
        return _undefined(
            study, "the study was not made from a plan: no judge and population to correct with"
        )
    key = _fingerprint(study, judge)
    result = cache.get(key)
    if result is None:
        result = _computed(study, judge)
        cache.set(key, result, timeout=3600)
    target = study.target_half_width
    return {
        **result,
        "target": target,
        "reached": target is not None
        and result.get("ci") is not None
        and target_reached(result["ci"], target, n_labelled=result["n_labels"]),
    }


def _computed(study: Study, judge: Judge) -> dict[str, Any]:
    design = study.design
    verdicts = _population_verdicts(judge, set(design["population"]))
    majority, _, _ = study_majority(study)
    probability = dict(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).values_list(
            "generation_id", "inclusion_probability"
        )
    )
    labelled = sorted(g for g, v in majority.items() if v is not None and g in verdicts)
    active = any(p is not None for p in probability.values())
    if active:
        labelled = [g for g in labelled if probability.get(g) is not None]
        result = active_how2score(
            human=[int(majority[g]) for g in labelled],
            judge_labelled=[verdicts[g] for g in labelled],
            probabilities=[probability[g] for g in labelled],
            judge_all=list(verdicts.values()),
        )
    else:
        chosen = set(labelled)
        result = how2score_ppi(
            human=[int(majority[g]) for g in labelled],
            judge=[verdicts[g] for g in labelled],
            unlabelled=[v for g, v in verdicts.items() if g not in chosen],
        )
        result["half_width"] = None if result["ci"] is None else half_width(result["ci"])
    return {
        **result,
        "method": ACTIVE if active else UNIFORM,
        "sampling": "uncertainty" if active else "uniform",
        "judge": {"id": judge.pk, "name": judge.name},
        "n_labels": len(labelled),
        "n_population": len(verdicts),
    }
