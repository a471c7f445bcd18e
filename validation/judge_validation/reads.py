"""Reads for the judge validation report: a study's human labels and the judges' verdicts on
its items (through :mod:`judging.selectors.verdicts`), turned into numbers by
:mod:`validation.judge_validation.stats`. Judge↔judge agreement is on the items both judges judged, and
Kendall's τ of the generator rankings comes from
:func:`validation.comparisons.reads.generator_rankings` (with its n)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from annotation import agreement as ag
from annotation.models import Study
from benchmarks.models import Dataset
from judging.models import Judge
from judging.selectors.verdicts import (
    judges_with_verdicts,
    study_majority,
    verdicts_for_generations,
)
from judging.stats.bootstrap import METHOD
from validation.comparisons.reads import generator_rankings
from validation.judge_validation import stats as validation


def _human_json(
    label_rows, *, n_resamples: int, confidence: float, seed: int
) -> tuple[dict[str, Any], ag.LabelMatrix]:
    """Human↔human agreement on the study (α, AC1 with its CI) for scale beside the judge,
    and the label matrix."""
    matrix = ag.LabelMatrix.from_triples(
        ((i, a, h) for i, a, h, _ in label_rows), categories=(False, True)
    )
    out: dict[str, Any] = {
        "n_labels": len(label_rows),
        "n_annotators": len(matrix.annotators),
        "alpha": ag.stat_json(ag.krippendorff_alpha(matrix)),
        "gwet_ac1": ag.stat_json(ag.gwet_ac1(matrix)),
    }
    if n_resamples > 0 and out["gwet_ac1"]["value"] is not None:
        ci = ag.ac1_bootstrap_ci(
            matrix.value_counts(),
            n_categories=2,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        out["gwet_ac1"]["ci"] = (
            ci.to_json() if isinstance(ci, ag.Undefined) else {**asdict(ci), "method": METHOD}
        )
    return out, matrix


def judge_validation(
    *,
    study: Study,
    judge: Judge,
    others: Sequence[Judge] | None = None,
    dataset: Dataset | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """The validation report of ``judge`` on ``study`` (see :mod:`validation.judge_validation.stats`), with
    judge↔judge agreement and ranking τ against ``others`` (default: every other judge with a
    verdict on the study's items)."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 0:
        raise ValueError("the number of bootstrap resamples cannot be negative")
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    majority, label_rows, item_generation = study_majority(study)
    generation_ids = list(item_generation.values())
    if others is None:
        others = [
            j for j in judges_with_verdicts(generation_ids=generation_ids) if j.pk != judge.pk
        ]
    others = [j for j in others if j.pk != judge.pk]
    verdicts = verdicts_for_generations(judges=[judge, *others], generation_ids=generation_ids)
    human, matrix = _human_json(label_rows, **options)
    report = validation.validation_report(
        majority=majority,
        verdicts=verdicts[judge.pk],
        leave_one_out=ag.leave_one_out(matrix),
        **options,
    )
    pairs = [
        {
            "judge_a": judge.name,
            "judge_b": other.name,
            **validation.judge_pair_json(a=verdicts[judge.pk], b=verdicts[other.pk], **options),
        }
        for other in others
    ]
    taus = []
    if others:
        rankings = generator_rankings(judges=[judge, *others], dataset=dataset)
        taus = [t for t in rankings["kendall_tau"] if judge.name in (t["judge_a"], t["judge_b"])]
    return {
        "study": {"id": study.pk, "name": study.name},
        "judge": {"name": judge.name, "judge_id": judge.judge_id, "model": judge.model},
        "dataset": None if dataset is None else {"id": dataset.pk, "name": str(dataset)},
        "human": human,
        **report,
        "judge_pairs": pairs,
        "ranking_tau": taus,
    }
