"""Celery tasks of the benchmarks app. Generation runs and mining batches have none of their
own: their chunks are the run engine's one task (``core.run_chunk``, :mod:`core.tasks`). A
mining batch's promotion into a dataset (embedding every candidate) is worked here, out of the
request (:mod:`benchmarks.mining.services.promotion`)."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True, name="mining.promote")
def promote(batch_id: int) -> str | None:
    from benchmarks.mining.services.promotion import batch_promote_work

    state = batch_promote_work(batch_id=batch_id)
    return None if state is None else state["status"]
