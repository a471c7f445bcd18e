"""Cost estimates out of the request, as runs of the engine (:mod:`core.runs.engine`): the
console or the API stores what is asked (:func:`judge_run_estimate_request`) and the engine's
chunk task computes it (:class:`JudgeRunEstimateExecutor`, which hashes every selected item
and samples prompts for their tokens); the page polls the row until its result is there. An
estimate is cancelled and resumed like every run."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import FieldRefusal
from core.runs import engine
from core.runs.engine import KEEP_WORKING, Lease, RunExecutor
from core.runs.models import RunStatus
from judging.models import Judge, JudgeRunEstimate
from judging.selectors import judgments as selectors
from judging.services.runs import imported_refusal, judge_launch_check, selection_estimate

KEEP = timedelta(days=1)  # estimates older than this are deleted when a new one is asked


def enqueue_estimate(estimate_id: int) -> None:
    """Send the estimate's first chunk (after commit: see :func:`judge_run_estimate_request`)."""
    est = JudgeRunEstimate.objects.filter(pk=estimate_id).first()
    if est is not None and est.is_active:
        engine.enqueue(est)


def judge_run_estimate_request(*, judge: Judge, selection: dict[str, Any], user=None):
    """Validate the selection (errors name the field), check the judge's server as the launch
    does (:func:`judge_launch_check`, the same refusal) and store an estimate to be computed by
    a worker; its chunk is sent when the transaction commits."""
    if judge.backend == Judge.Backend.IMPORTED:
        raise FieldRefusal({"judge": imported_refusal(judge)})
    selection = selectors.selection_clean(selection)
    judge_launch_check(judge=judge)
    with transaction.atomic():
        old = JudgeRunEstimate.objects.filter(created_at__lt=timezone.now() - KEEP)
        old.exclude(status__in=JudgeRunEstimate.ACTIVE).delete()
        est = JudgeRunEstimate.objects.create(
            judge=judge, selection=selection, created_by=user, n_total=1
        )
        transaction.on_commit(lambda: enqueue_estimate(est.pk))
    return est


def _json_ready(result: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in result.items()}


def judge_run_estimate_work(*, estimate_id: int) -> JudgeRunEstimate | None:
    """Compute a stored estimate in this process (commands, tests): the engine works it as its
    chunk task would. A finished estimate is left as it is."""
    return engine.execute_pending(JudgeRunEstimate, estimate_id)


def judge_run_estimate_cancel(*, estimate: JudgeRunEstimate) -> JudgeRunEstimate:
    return engine.cancel(estimate)


class JudgeRunEstimateExecutor(RunExecutor):
    """One chunk computes the whole estimate (read-only, so a redelivered chunk may compute it
    again); the result is stored only while the lease is held and the estimate not cancelled.
    An error fails the run with its text, shown on the page."""

    def work_chunk(self, run: JudgeRunEstimate, lease: Lease) -> bool:
        result = selection_estimate(judge=run.judge, selection=run.selection)  # stored clean
        if lease.beat() not in KEEP_WORKING:
            return True  # cancelling or lost: the engine ends or leaves it
        lease.held().update(result=_json_ready(result))
        return False

    def counters(self, run: JudgeRunEstimate) -> dict[str, Any]:
        """One item, the estimate: done once its result is stored (counted from the row)."""
        stored = JudgeRunEstimate.objects.filter(pk=run.pk, result__isnull=False).exists()
        return {"n_total": 1, "n_done": int(stored)}

    def outcome(self, run: JudgeRunEstimate) -> tuple[str, str]:
        return RunStatus.DONE, ""

    def on_resume(self, run: JudgeRunEstimate) -> None:
        JudgeRunEstimate.objects.filter(pk=run.pk).update(result=None)
