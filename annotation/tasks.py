"""Celery tasks of the annotation app (thin: ids in, one service call).

- ``annotation.prolific_delivery_apply``: apply one accepted Prolific webhook delivery.
- ``annotation.prolific_poll`` (beat, every ``PROLIFIC_POLL_SECONDS``): read the status and
  submissions of every study created from the app that is still live on Prolific, through the
  same service the webhooks use; with a webhook URL, only the studies last read
  ``PROLIFIC_RECONCILE_SECONDS`` ago (reconciliation)."""

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
