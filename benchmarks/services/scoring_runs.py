"""Writes for scoring runs: create (the pack and its options checked), start or resume, cancel.
The work is the run engine's (:mod:`benchmarks.services.scoring_execution`)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from benchmarks.models import Dataset, Generator, ScoringRun
from benchmarks.packs.registry import get_pack
from benchmarks.services.scoring_execution import scoring_run_counts
from core.runs import engine
from core.runs.engine import RunStateError


class ScoringRunError(ValueError):
    """A scoring run that cannot be created or started as asked; the message says why."""


def scoring_run_validate(*, pack: str, options: Any, chunk_size: int) -> dict[str, Any]:
    """The run's options checked against the pack's named options; ``ScoringRunError``
    naming the pack, the option or the chunk size."""
    try:
        scorer = get_pack(pack)
    except KeyError as exc:
        raise ScoringRunError(f"pack: {exc.args[0]}") from None
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ScoringRunError("options: must be a JSON object of the pack's option names")
    unknown = sorted(set(options) - set(scorer.options))
    if unknown:
        known = ", ".join(sorted(scorer.options)) or "none"
        raise ScoringRunError(f"options: unknown {', '.join(unknown)} for {pack}; known: {known}")
    if not 1 <= int(chunk_size) <= 10_000:
        raise ScoringRunError("chunk_size: must be 1 to 10000")
    return dict(options)


def scoring_run_create(
    *,
    generator: Generator,
    dataset: Dataset,
    pack: str,
    options: dict[str, Any] | None = None,
    chunk_size: int = 500,
    created_by=None,
    start: bool = True,
) -> ScoringRun:
    """Create a run, queued, with ``n_total`` counted; its first chunk is enqueued on commit
    unless ``start=False`` (then :func:`scoring_run_start` launches it)."""
    options = scoring_run_validate(pack=pack, options=options, chunk_size=chunk_size)
    with transaction.atomic():
        run = ScoringRun.objects.create(
            generator=generator,
            dataset=dataset,
            pack=pack,
            options=options,
            chunk_size=chunk_size,
            created_by=created_by,
        )
        counts = scoring_run_counts(run=run)
        ScoringRun.objects.filter(pk=run.pk).update(**counts)
        for field, value in counts.items():
            setattr(run, field, value)
        if start:
            engine.launch(run)
    return run


def scoring_run_start(*, run: ScoringRun, enqueue: bool = True, force: bool = False) -> ScoringRun:
    """Start or resume a run (``engine.resume``): what it scored is kept, the rest is walked
    again. A done run has nothing to resume; a run whose worker is alive needs ``force``."""
    try:
        return engine.resume(run, force=force, enqueue=enqueue)
    except RunStateError as exc:
        raise ScoringRunError(str(exc)) from exc


def scoring_run_cancel(*, run: ScoringRun) -> ScoringRun:
    """Stop a run: a queued one at once, a running one after its current batch."""
    try:
        return engine.cancel(run)
    except RunStateError as exc:
        raise ScoringRunError(str(exc)) from exc
