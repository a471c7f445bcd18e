"""Reads for How2Score corrected with a study's labels (PPI++, :mod:`validation.ppi.stats`): per
generator, and per generator and topic, the judge's verdicts on every generation it scored
(:func:`judging.selectors.judgments.score_records`, parse failures left out) with the human
majority of a critical-failure study as the labels.

Labelled: the study's generations with a clear human majority and a verdict of the judge.
Unlabelled: the judge's other scored generations of the same generator (the study's items with
a tied majority among them: no label to use). The study's items the judge never scored are
counted, not used.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from annotation.models import Study
from benchmarks.models import Dataset
from core.errors import FieldRefusal
from judging.models import Judge
from judging.selectors.judgments import score_records
from judging.selectors.verdicts import study_majority
from validation.ppi.stats import ALPHA, how2score_ppi


def _estimate(rows: list[tuple[bool | None, bool]]) -> dict[str, Any]:
    labelled = [(h, j) for h, j in rows if h is not None]
    result = how2score_ppi(
        human=[int(h) for h, _ in labelled],
        judge=[int(j) for _, j in labelled],
        unlabelled=[int(j) for h, j in rows if h is None],
        alpha=ALPHA,
    )
    return result


def ppi_rankings(*, study: Study, judge: Judge, dataset: Dataset | None = None) -> dict[str, Any]:
    """Generators ranked by PPI++ How2Score (module docstring); judge-only and human-only
    estimates beside each, and the same per topic."""
    if study.form_type != "critical_failure":
        raise FieldRefusal(
            {"study": f"PPI corrects has_failure: {study.name!r} is a {study.form_type} study"}
        )
    majority, _, _ = study_majority(study)
    by_generator: dict[str, list[tuple[bool | None, bool]]] = defaultdict(list)
    by_topic: dict[tuple[str, str], list[tuple[bool | None, bool]]] = defaultdict(list)
    scored: set[int] = set()
    n_parse_failed = 0
    for rec in score_records(judge=judge, generator=None, run=None, dataset=dataset):
        if rec["parse_failed"]:
            n_parse_failed += 1
            continue
        gid = rec["generation_id"]
        scored.add(gid)
        pair = (majority.get(gid), bool(rec["has_failure"]))
        by_generator[rec["generator"]].append(pair)
        by_topic[(rec["generator"], rec["topic"])].append(pair)
    rows = []
    for generator, pairs in by_generator.items():
        topics = [
            {"topic": topic or "(no topic)", **_estimate(p)}
            for (g, topic), p in sorted(by_topic.items())
            if g == generator
        ]
        rows.append({"generator": generator, **_estimate(pairs), "topics": topics})
    rows.sort(key=lambda r: (r["how2score"] is None, -(r["how2score"] or 0), r["generator"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank if row["how2score"] is not None else None
    labelled_ids = {g for g, v in majority.items() if v is not None}
    return {
        "study": {"id": study.pk, "name": study.name},
        "judge": {"name": judge.name, "judge_id": judge.judge_id},
        "dataset": None if dataset is None else {"id": dataset.pk, "name": str(dataset)},
        "method": "PPI++ mean (ppi-python, power-tuned λ), 95% normal intervals",
        "alpha": ALPHA,
        "n_study_labelled": len(labelled_ids),
        "n_study_tied": sum(1 for v in majority.values() if v is None),
        "n_study_not_scored": len(labelled_ids - scored),
        "n_parse_failed": n_parse_failed,
        "generators": rows,
    }
