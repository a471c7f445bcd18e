"""Celery tasks: thin, take ids, call one service. Idempotent and resumable."""

from __future__ import annotations

from celery import shared_task

from benchmarks.mining.services import batches as services


@shared_task(bind=True, acks_late=True, ignore_result=True)
def mining_batch_run(self, batch_id: int) -> None:
    services.batch_run(batch_id=batch_id, runner=self.request.id or None)
