"""Celery tasks for judge runs: thin wrappers around judging.services.

``judge_run_chunk`` judges one chunk of a run and enqueues the next chunk; a run held by
another live worker is retried after its lease. ``vllm_judge_run_chunk`` is the same on the
``gpu`` queue (settings route ``judging.tasks.vllm_*`` there). When a worker starts, runs
left active by a dead worker are resumed (``worker_ready``).
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

logger = logging.getLogger(__name__)


def _run_chunk(task, run_id: int) -> str:
    from judging.services import runs as services

    outcome = services.judge_run_execute_chunk(run_id=run_id, owner=task.request.id)
    if outcome.status in ("more", "busy"):
        from judging.models import JudgeRun

        backend = (
            JudgeRun.objects.filter(pk=run_id).values_list("judge__backend", flat=True).first()
        )
        services.enqueue_run(
            run_id=run_id,
            backend=backend or "openai",
            countdown=outcome.retry_in_s if outcome.status == "busy" else None,
        )
    return outcome.status


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True, name="judging.tasks.judge_run_chunk"
)
def judge_run_chunk(self, run_id: int) -> str:
    return _run_chunk(self, run_id)


@shared_task(
    bind=True, acks_late=True, reject_on_worker_lost=True, name="judging.tasks.vllm_judge_run_chunk"
)
def vllm_judge_run_chunk(self, run_id: int) -> str:
    return _run_chunk(self, run_id)


@shared_task(name="judging.tasks.judge_runs_resume")
def judge_runs_resume() -> list[int]:
    from judging.services import runs as services

    return services.judge_runs_resume()


@worker_ready.connect
def _resume_on_worker_start(sender=None, **_kwargs) -> None:
    try:
        judge_runs_resume.delay()
    except Exception:
        logger.exception("could not enqueue the resume of stale judge runs")
