"""Celery tasks of the judging app. A judge run is worked by the run engine's one chunk task,
``core.run_chunk`` (:mod:`core.tasks`), on the queue its judge's backend is routed to
(``benchmarks.llm.registry.queue_for``: a vLLM judge on the ``gpu`` queue); its items are
selected and hashed by the first chunk (:mod:`judging.services.launch`); runs left active by a
dead worker are resumed when a worker starts (``core.runs_resume_orphans``). A cost estimate
asked in the console or the API and a large judge leaderboard are computed here, out of the
request."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True, name="judging.estimate")
def estimate(estimate_id: int) -> str:
    """Compute one :class:`judging.models.JudgeRunEstimate` and store its result."""
    from judging.services.estimates import judge_run_estimate_work

    done = judge_run_estimate_work(estimate_id=estimate_id)
    return "gone" if done is None else done.status


@shared_task(acks_late=True, reject_on_worker_lost=True, name="judging.leaderboard")
def leaderboard(report_id: int) -> str:
    """Recompute one stored judge leaderboard (:mod:`judging.services.leaderboard`)."""
    from judging.services.leaderboard import leaderboard_compute

    report = leaderboard_compute(report_id=report_id)
    return "gone" if report is None else report.status
