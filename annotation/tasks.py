"""Celery tasks of the annotation app (thin: ids in, one service call).

- ``annotation.prolific_delivery_apply``: apply one accepted Prolific webhook delivery.
- ``annotation.prolific_poll`` (beat, every ``PROLIFIC_POLL_SECONDS``): read the status and
  submissions of every study created from the app that is still live on Prolific, through the
  same service the webhooks use; with a webhook URL, only the studies last read
  ``PROLIFIC_RECONCILE_SECONDS`` ago (reconciliation).
- ``annotation.study_report_compute``: compute a large study's agreement report and store it in
  the cache the report page reads (enqueued by the page; one at a time per study)."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="annotation.prolific_delivery_apply", acks_late=True, ignore_result=True)
def prolific_delivery_apply(delivery_id: int) -> str:
    from annotation.services.prolific_events import delivery_apply

    return delivery_apply(delivery_id=delivery_id)


@shared_task(name="annotation.prolific_poll", ignore_result=True, expires=300)
def prolific_poll() -> int:
    from annotation.services.prolific_study import prolific_poll_all

    return prolific_poll_all()


@shared_task(name="annotation.study_report_compute", ignore_result=True)
def study_report_compute(study_id: int) -> str:
    from annotation.selectors.report import compute_study_report

    return compute_study_report(study_id=study_id)


def enqueue_study_report(study_id: int) -> None:
    """Start the computation of a large study's agreement report on a worker."""
    study_report_compute.apply_async(args=[study_id])
