"""How2Score with uncertainty for one judge (reads): the judge's verdicts per generator from
:func:`judging.selectors.judgments.score_records`, the numbers from
:mod:`judging.stats.how2score`."""

from __future__ import annotations

from typing import Any

from benchmarks.models import Dataset
from judging.models import Judge
from judging.selectors.judgments import score_records
from judging.stats import how2score as h2s


def how2score_uncertainty(
    *,
    judge: Judge,
    dataset: Dataset | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Generators ranked by How2Score under ``judge`` with bootstrap CIs (overall and per
    topic), average generated tokens, and the tests between ranking neighbours."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    records = score_records(judge=judge, generator=None, run=None, dataset=dataset)
    rows, outcomes = h2s.generator_scores(records, **options)
    ranked = [r["generator"] for r in rows if r["n_examples"]]
    return {
        "judge": judge.name,
        "judge_id": judge.judge_id,
        "dataset": None if dataset is None else {"id": dataset.pk, "name": str(dataset)},
        "bootstrap": options,
        "generators": rows,
        "neighbours": h2s.neighbour_tests(ranked, outcomes, **options),
        "multiple_comparisons": h2s.MULTIPLE_COMPARISON_NOTE,
    }
