"""Reads for the analyses pages: one analysis row per generation a judge judged (parse
failures left out, as How2Score does), with the instance properties of D.5, the D.3 proxies and
the generator's checkpoint metadata; then the numbers of :mod:`judging.analyses`."""

from __future__ import annotations

from typing import Any

from benchmarks import scorers
from benchmarks.models import Dataset
from benchmarks.tokens import count_steps_tokens
from judging.analyses import breakdowns, checkpoints, regression
from judging.models import Judge, JudgeRunItem


def analysis_rows(*, judge: Judge, dataset: Dataset | None = None) -> list[dict[str, Any]]:
    """One row per generation judged by ``judge`` with a parsed verdict (see
    :mod:`judging.analyses`). Token counts come from the stored scores (``gen_tokens`` /
    ``ref_tokens``) or ``token_count`` where present, else o200k counts made here."""
    items = JudgeRunItem.objects.filter(judgment__judge_key=judge.judge_id)
    if dataset is not None:
        items = items.filter(generation__procedure__dataset=dataset)
    values = items.values_list(
        "generation_id",
        "generation__generator__name",
        "generation__procedure_id",
        "generation__procedure__topic__name",
        "generation__procedure__steps",
        "generation__procedure__resources",
        "generation__procedure__url",
        "generation__predicted_steps",
        "generation__scores",
        "generation__token_count",
        "judgment__has_failure",
        "judgment__parse_failed",
    ).order_by("generation_id", "-judgment_id")
    seen: set[int] = set()
    ref_tokens_cache: dict[int, int] = {}
    rows = []
    for (
        gid,
        generator,
        procedure_id,
        topic,
        ref_steps,
        resources,
        url,
        predicted,
        scores,
        token_count,
        has_failure,
        parse_failed,
    ) in values.iterator(chunk_size=2000):
        if gid in seen:
            continue
        seen.add(gid)
        if parse_failed:
            continue
        ref_steps, predicted, scores = ref_steps or [], predicted or [], scores or {}
        gen_tokens = scores.get("gen_tokens", token_count)
        if gen_tokens is None:
            gen_tokens = count_steps_tokens(predicted)
        ref_tokens = scores.get("ref_tokens")
        if ref_tokens is None:
            if procedure_id not in ref_tokens_cache:
                ref_tokens_cache[procedure_id] = count_steps_tokens(ref_steps)
            ref_tokens = ref_tokens_cache[procedure_id]
        rows.append(
            {
                "generation_id": gid,
                "generator": generator,
                "procedure_id": procedure_id,
                "topic": topic or "",
                "url": url or "",
                "ref_steps": len(ref_steps),
                "n_resources": len(resources or []),
                "gen_tokens": int(gen_tokens),
                "ref_tokens": int(ref_tokens),
                "ratio_pp": 100.0 * gen_tokens / ref_tokens if ref_tokens else None,
                "no_failure": 0 if has_failure else 1,
                "step_count_mismatch": scorers.step_count_mismatch(predicted, ref_steps),
                "duplicate_steps": scorers.has_duplicate_steps(predicted),
                "dup_ngram_rate": sum(scorers.dup_ngram_rate(predicted, n) for n in (1, 2, 3, 4))
                / 4,
            }
        )
    return rows


def generator_checkpoints(names) -> dict[str, dict[str, Any]]:
    from benchmarks.models import Generator

    return dict(Generator.objects.filter(name__in=list(names)).values_list("name", "checkpoint"))


ROW_COLUMNS = (
    "generation_id",
    "generator",
    "procedure_id",
    "topic",
    "url",
    "ref_steps",
    "n_resources",
    "gen_tokens",
    "ref_tokens",
    "ratio_pp",
    "no_failure",
    "step_count_mismatch",
    "duplicate_steps",
    "dup_ngram_rate",
)


def difficulty(*, judge: Judge, dataset: Dataset | None = None) -> dict[str, Any]:
    rows = analysis_rows(judge=judge, dataset=dataset)
    return {"judge": judge.name, **regression.difficulty_regression(rows)}


def breakdown(
    *, judge: Judge, by: str, dataset: Dataset | None = None, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    rows = analysis_rows(judge=judge, dataset=dataset)
    return {
        "judge": judge.name,
        **breakdowns.breakdown(rows, by, n_resamples=n_resamples, seed=seed),
    }


def checkpoint_scaling(
    *,
    judge: Judge,
    axis: str = "step",
    dataset: Dataset | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    rows = analysis_rows(judge=judge, dataset=dataset)
    metadata = generator_checkpoints({r["generator"] for r in rows})
    return {
        "judge": judge.name,
        **checkpoints.checkpoint_summary(
            rows, metadata, axis=axis, n_resamples=n_resamples, seed=seed
        ),
    }


def orderings(
    *,
    judge: Judge,
    column: dict[str, float],
    lower_is_better: bool = True,
    dataset: Dataset | None = None,
) -> dict[str, Any]:
    """Spearman between How2Score and a user-supplied column over the generators in both."""
    rows = analysis_rows(judge=judge, dataset=dataset)
    totals: dict[str, list[int]] = {}
    for r in rows:
        totals.setdefault(r["generator"], []).append(r["no_failure"])
    scores = {g: sum(v) / len(v) for g, v in totals.items()}
    return {
        "judge": judge.name,
        **checkpoints.ordering_correlation(scores, column, lower_is_better=lower_is_better),
    }
