"""The judge validation report (pure): one judge against the human majority of a study, with
uncertainty. Numbers from :mod:`judging.stats` (bootstrap CIs, κ, AC1, constant baselines),
the counts from :func:`judging.agreement.judge_vs_majority`, the human baseline from
:func:`annotation.agreement.leave_one_out`. No Django.

Report keys (every statistic ``{"value", "ci"}`` or ``{"value": null, "undefined": reason}``):

- ``agreement``, ``per_class``, ``kappa``, ``gwet_ac1`` — the judge vs the human majority;
- ``baselines`` — the same numbers for a judge that always says ``has_failure`` or always
  ``no_failure``: what agreement alone would reward;
- ``leave_one_out`` — each annotator vs the majority of the others, with a CI; ``versus_humans``
  places the judge below, within or above their range ("as good as one annotator");
- ``items`` — how many study items were compared, tied, not judged, not parsed.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from annotation.agreement import LeaveOneOut, Undefined, stat_json
from judging.agreement import CLASSES, judge_vs_majority
from judging.stats.binary import binary_agreement, constant_baselines
from judging.stats.bootstrap import bootstrap_proportion_ci
from validation.comparisons.stats import judge_vs_judge


def leave_one_out_json(
    rows: Sequence[LeaveOneOut], *, n_resamples: int, confidence: float, seed: int
) -> dict[str, Any]:
    """Each annotator's agreement with the others' majority, with a bootstrap CI over their
    compared items; ``min``, ``max`` and ``mean`` over the annotators with a defined value."""
    annotators = []
    values = []
    for r in rows:
        entry: dict[str, Any] = {
            "annotator_id": str(r.annotator),
            "n_compared": r.n_compared,
            "n_agree": r.n_agree,
            "agreement": stat_json(r.agreement),
        }
        if not isinstance(r.agreement, Undefined):
            values.append(float(r.agreement))
            if n_resamples > 0:
                entry["agreement"]["ci"] = bootstrap_proportion_ci(
                    r.n_agree,
                    r.n_compared,
                    n_resamples=n_resamples,
                    confidence=confidence,
                    seed=seed,
                ).to_json()
        annotators.append(entry)
    none = Undefined("no annotator shares items with another")
    return {
        "annotators": annotators,
        "min": stat_json(min(values) if values else none),
        "max": stat_json(max(values) if values else none),
        "mean": stat_json(sum(values) / len(values) if values else none),
    }


def versus_humans(agreement: Mapping[str, Any], loo: Mapping[str, Any]) -> dict[str, Any]:
    """Where the judge's agreement falls against the annotators' leave-one-out range:
    ``below``, ``within`` or ``above`` (``undefined`` when either side is), and the
    difference from the annotators' mean."""
    judge, low, high, mean = (
        agreement.get("value"),
        loo["min"]["value"],
        loo["max"]["value"],
        loo["mean"]["value"],
    )
    if judge is None or low is None:
        return {"position": "undefined", "difference_from_mean": None}
    position = "below" if judge < low else "above" if judge > high else "within"
    return {"position": position, "difference_from_mean": judge - mean}


def validation_report(
    *,
    majority: Mapping[Hashable, bool | None],
    verdicts: Mapping[Hashable, bool | None],
    leave_one_out: Sequence[LeaveOneOut],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """The report for one judge (see the module docstring)."""
    counts = judge_vs_majority(majority=majority, verdicts=verdicts)
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    stats = binary_agreement(counts.confusion, reference="a clear human majority", **options)
    loo = leave_one_out_json(leave_one_out, **options)
    return {
        "items": {
            "n_items": counts.n_items,
            "n_tied": counts.n_tied,
            "n_not_judged": counts.n_not_judged,
            "n_parse_failed": counts.n_parse_failed,
            "n_compared": counts.n_compared,
        },
        **stats,
        "confusion": {
            "rows": "human_majority",
            "columns": "judge",
            "labels": list(CLASSES),
            "counts": counts.confusion,
        },
        "baselines": constant_baselines(counts.confusion, **options),
        "leave_one_out": loo,
        "versus_humans": versus_humans(stats["agreement"], loo),
        "bootstrap": options,
    }


def judge_pair_json(
    *,
    a: Mapping[Hashable, bool | None],
    b: Mapping[Hashable, bool | None],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Two judges on the items both judged (:func:`validation.comparisons.stats.judge_vs_judge`), with
    CIs on their agreement, κ and AC1; ``n_shared`` is the n behind every number."""
    pair = judge_vs_judge(a=a, b=b)
    stats = binary_agreement(
        pair.confusion,
        reference="a verdict of the other judge",
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    return {
        "n_shared": pair.n_shared,
        "n_only_a": pair.n_only_a,
        "n_only_b": pair.n_only_b,
        "n_parse_failed": pair.n_parse_failed,
        "agreement": stats["agreement"],
        "kappa": stats["kappa"],
        "gwet_ac1": stats["gwet_ac1"],
        "confusion": pair.confusion,
    }
