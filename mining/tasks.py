"""Celery tasks of the mining app. Batch chunks are the run engine's chunk task
(``core.run_chunk``, :mod:`core.tasks`), sent by :func:`core.runs.engine.launch`. A batch's
promotion into a dataset (embedding every candidate) is worked here, out of the request
(:mod:`mining.services.promotion`)."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True, name="mining.promote")
def promote(batch_id: int) -> str | None:
    from mining.services.promotion import batch_promote_work

    state = batch_promote_work(batch_id=batch_id)
    return None if state is None else state["status"]
