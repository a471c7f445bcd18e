"""Celery tasks of the benchmarks app. Thin: ids in, one service call."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="benchmarks.generation_run_chunk", acks_late=True, ignore_result=True)
def generation_run_chunk(run_id: int, epoch: int) -> None:
    """One chunk of a generation run; the service enqueues the next one on commit."""
    from benchmarks.services.generation_runs import generation_run_execute_chunk

    generation_run_execute_chunk(run_id=run_id, epoch=epoch)
