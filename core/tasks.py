"""The one chunk task of the run engine (:mod:`core.runs.engine`), and the resume of orphaned
runs when a worker starts."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, name="core.run_chunk")
def run_chunk(self, label: str, run_id: int) -> str:
    """One chunk of the run ``label`` (``app_label.ModelName``) ``run_id``. A run held by a
    live execution is looked at again when that execution's lease would go stale."""
    from core.runs import engine

    outcome = engine.execute(label, run_id)
    if outcome.status == "busy":
        engine.enqueue_by_id(label, run_id, countdown=outcome.retry_in_s)
    return outcome.status


@shared_task(name="core.runs_resume_orphans")
def runs_resume_orphans() -> list[str]:
    from core.runs import engine

    return engine.resume_orphans()


@worker_ready.connect
def _resume_on_worker_start(sender=None, **_kwargs) -> None:
    try:
        runs_resume_orphans.delay()
    except Exception:  # never keep a worker from starting
        logger.exception("could not enqueue the resume of orphaned runs")
