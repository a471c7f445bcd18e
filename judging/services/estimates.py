"""Cost estimates out of the request: the console or the API stores what is asked
(:func:`judge_run_estimate_request`) and a Celery task (``judging.estimate``) computes it
(:func:`judge_run_estimate_work`, which hashes every selected item and samples prompts for
their tokens); the page polls the row until its result is there."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from judging.models import Judge, JudgeRunEstimate
from judging.selectors import judgments as selectors
from judging.services.runs import judge_run_estimate

KEEP = timedelta(days=1)  # estimates older than this are deleted when a new one is asked


def enqueue_estimate(estimate_id: int) -> None:
    """Send the estimate's task (after commit: see :func:`judge_run_estimate_request`)."""
    from judging.tasks import estimate

    estimate.delay(estimate_id)


def judge_run_estimate_request(*, judge: Judge, selection: dict[str, Any], user=None):
    """Validate the selection (errors name the field) and store an estimate to be computed by
    a worker; its task is sent when the transaction commits."""
    if judge.backend == Judge.Backend.IMPORTED:
        raise ValueError(f"judge {judge.name!r} holds imported judgments; it cannot be run")
    selection = selectors.selection_clean(selection)
    with transaction.atomic():
        JudgeRunEstimate.objects.filter(created_at__lt=timezone.now() - KEEP).delete()
        est = JudgeRunEstimate.objects.create(judge=judge, selection=selection, created_by=user)
        transaction.on_commit(lambda: enqueue_estimate(est.pk))
    return est


def _json_ready(result: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in result.items()}


def judge_run_estimate_work(*, estimate_id: int) -> JudgeRunEstimate | None:
    """Compute a stored estimate (the task's body). Computing is read-only, so a redelivered
    task may compute it again; a finished estimate is left as it is."""
    est = JudgeRunEstimate.objects.select_related("judge").filter(pk=estimate_id).first()
    if est is None or est.is_finished:
        return est
    JudgeRunEstimate.objects.filter(pk=est.pk).update(status=JudgeRunEstimate.Status.RUNNING)
    try:
        result = judge_run_estimate(judge=est.judge, selection=est.selection)
    except Exception as exc:  # noqa: BLE001 - stored and shown on the page, not lost in a log
        JudgeRunEstimate.objects.filter(pk=est.pk).update(
            status=JudgeRunEstimate.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
        )
    else:
        JudgeRunEstimate.objects.filter(pk=est.pk).update(
            status=JudgeRunEstimate.Status.DONE,
            result=_json_ready(result),
            finished_at=timezone.now(),
        )
    est.refresh_from_db()
    return est
