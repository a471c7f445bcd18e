"""Reads for metric ↔ human validation on a study: an automatic metric stored on the study's
generations (a scorer pack's result, ``Generation.pack_scores[pack]["metrics"][metric]``, from
scoring runs) against the study's human labels, by the study's form type:

- ``critical_failure``: the metric as a detector of the human majority "has a critical
  failure" (tied items left out): AUC, precision, recall;
- ``rating``: Cohen's κ of the discretised metric against each dimension's mean rating
  (rounded), or one ``dimension``;
- ``pairwise``: % agreement and Kendall's τ-b of the metric's preference between the two
  generations of an item against the humans' majority preference.

The numbers are :mod:`validation.metric_validation.stats`'s, with bootstrap CIs over items. Items without
the metric (not scored, or the pack could not score them) are left out and counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from annotation.models import Annotation, Study, StudyItem
from annotation.selectors.flow import study_label_rows
from benchmarks.models import Generation
from judging import agreement as cmp
from validation.metric_validation import stats as mh

FORM_TYPES = ("critical_failure", "rating", "pairwise")


def metric_values(*, generation_ids: Iterable[int], pack: str, metric: str) -> dict[int, float]:
    """``{generation id: value}`` of a pack's metric where it is a number."""
    out: dict[int, float] = {}
    for pk, scores in Generation.objects.filter(pk__in=list(generation_ids)).values_list(
        "pk", "pack_scores"
    ):
        value = ((scores or {}).get(pack) or {}).get("metrics", {}).get(metric)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[pk] = float(value)
    return out


def metrics_on_study(*, study: Study) -> list[tuple[str, str]]:
    """The (pack, metric) pairs with a number on at least one of the study's generations."""
    found: set[tuple[str, str]] = set()
    ids = StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).values_list(
        "generation_id", "generation_b_id"
    )
    flat = [g for pair in ids for g in pair if g]
    for scores in Generation.objects.filter(pk__in=flat).values_list("pack_scores", flat=True):
        for pack, entry in (scores or {}).items():
            for key, value in (entry or {}).get("metrics", {}).items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    found.add((pack, key))
    return sorted(found)


def _regular_items(study: Study):
    return StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)


def _labels(study: Study) -> dict[int, list[dict]]:
    by_item: dict[int, list[dict]] = defaultdict(list)
    for item_id, label in Annotation.objects.filter(
        item__study=study, item__kind=StudyItem.Kind.REGULAR
    ).values_list("item_id", "label"):
        by_item[item_id].append(label or {})
    return by_item


def _critical(study, values, options, *, threshold, direction) -> dict[str, Any]:
    majority = cmp.human_majority((i, a, h) for i, a, h, _ in study_label_rows(study=study))
    item_generation = dict(_regular_items(study).values_list("id", "generation_id"))
    scores, flags, n_tied, n_missing = [], [], 0, 0
    for item_id, verdict in majority.items():
        gid = item_generation.get(item_id)
        if verdict is None:
            n_tied += 1
        elif gid not in values:
            n_missing += 1
        else:
            scores.append(values[gid])
            flags.append(bool(verdict))
    result = mh.critical_detector(
        scores, flags, threshold=threshold, direction=direction, **options
    )
    return {"items": {"n_labelled": len(majority), "n_tied": n_tied, "n_no_metric": n_missing},
            "detector": result}  # fmt: skip


def _rating(study, values, options, *, rule, cuts, dimension) -> dict[str, Any]:
    config = study.form_config or {}
    low, points = int(config.get("low", 0)), int(config.get("points", 5))
    scale = list(range(low, low + points))
    dims = config.get("dimensions") or []
    if dimension:
        dims = [d for d in dims if d["key"] == dimension]
        if not dims:
            raise ValueError(f"dimension: the study has no rating dimension {dimension!r}")
    labels = _labels(study)
    item_generation = dict(_regular_items(study).values_list("id", "generation_id"))
    out = []
    for dim in dims:
        metric, ratings, n_missing = [], [], 0
        for item_id, answers in labels.items():
            given = [
                a["ratings"][dim["key"]]
                for a in answers
                if isinstance((a.get("ratings") or {}).get(dim["key"]), int)
            ]
            if not given:
                continue
            gid = item_generation.get(item_id)
            if gid not in values:
                n_missing += 1
                continue
            metric.append(values[gid])
            ratings.append(sum(given) / len(given))
        result = mh.metric_kappa(metric, ratings, scale=scale, rule=rule, cuts=cuts, **options)
        out.append({"key": dim["key"], "label": dim.get("label", dim["key"]),
                    "n_no_metric": n_missing, **result})  # fmt: skip
    return {"dimensions": out}


def _pairwise(study, values, options) -> dict[str, Any]:
    labels = _labels(study)
    items = _regular_items(study).values_list("id", "generation_id", "generation_b_id")
    pairs, n_missing, n_unlabelled = [], 0, 0
    for item_id, gid_a, gid_b in items:
        votes = [a.get("preferred") for a in labels.get(item_id, []) if a.get("preferred")]
        if not votes:
            n_unlabelled += 1
        elif gid_a not in values or gid_b not in values:
            n_missing += 1
        else:
            pairs.append((values[gid_a], values[gid_b], mh.majority_preference(votes)))
    result = mh.pairwise_agreement(pairs, **options)
    return {"items": {"n_unlabelled": n_unlabelled, "n_no_metric": n_missing}, "pairwise": result}


def metric_validation(
    *,
    study: Study,
    pack: str,
    metric: str,
    rule: str = "quantiles",
    cuts: Sequence[float] | None = None,
    threshold: float | None = None,
    direction: str = "low",
    dimension: str | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """The metric ↔ human report of ``pack``'s ``metric`` on ``study`` (module docstring).
    ``ValueError`` naming the option for a study form type without an analysis, an unknown
    dimension or a bad rule, threshold or direction."""
    if study.form_type not in FORM_TYPES:
        raise ValueError(
            f"study: form type {study.form_type!r} has no metric↔human analysis "
            f"({', '.join(FORM_TYPES)})"
        )
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    ids = [g for pair in _regular_items(study).values_list("generation_id", "generation_b_id")
           for g in pair if g]  # fmt: skip
    values = metric_values(generation_ids=ids, pack=pack, metric=metric)
    report: dict[str, Any] = {
        "study": {"id": study.pk, "name": study.name, "form_type": study.form_type},
        "metric": {"pack": pack, "metric": metric, "n_generations_with_value": len(values)},
        "bootstrap": options,
    }
    if study.form_type == "critical_failure":
        report.update(_critical(study, values, options, threshold=threshold, direction=direction))
    elif study.form_type == "rating":
        report.update(_rating(study, values, options, rule=rule, cuts=cuts, dimension=dimension))
    else:
        report.update(_pairwise(study, values, options))
    return report
