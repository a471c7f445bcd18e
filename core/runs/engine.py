"""The one run engine: launch, chunk, lease, heartbeat, resume, cancel, finish.

A run type (a concrete :class:`core.runs.models.Run`) is registered with its
:class:`RunExecutor` (and, where it has them, its batch adapter and launch preparation) by its
app's ``ready()`` (:mod:`core.runs.registry`); the executor does the type's work one chunk at a
time and the engine does the rest, the same way for every type:

1. :func:`launch` enqueues the first chunk once the creating transaction commits, on the queue
   the executor picks (:meth:`RunExecutor.queue`; vLLM offline work goes to the ``gpu`` queue).
2. Each chunk is one Celery task (:func:`run_chunk`, this module's: the engine sends it without
   naming it by string) calling :func:`execute`, which
   takes the run's lease with a fresh random token (a redelivered copy of the same message has
   another token, so it cannot work the run while the first copy holds it), finishes the
   launch where the type left part of it to the worker (its ``prepare_launch``), lets the
   executor work one chunk, then either enqueues the next chunk or finishes the run. The executor beats
   the lease while it works (:meth:`Lease.beat`) and stops early when the lease is lost or the
   run is being cancelled.
3. A second execution that finds the lease held by a live execution does no work and looks
   again when that lease would go stale (so a run whose worker died is taken over).
4. :func:`cancel` stops a queued run at once and asks a running one to stop (``cancelling``);
   :func:`resume` requeues a failed, cancelled or orphaned run; :func:`resume_orphans` requeues
   every active run that nobody holds (run when a worker starts and periodically by Celery beat).
6. A chunk is bounded in time too: its lease's :attr:`Lease.due` (``RUN_CHUNK_SECONDS``) makes
   :meth:`Lease.beat` answer ``DUE``; the executor stores what is in flight and returns "more",
   so every chunk ends well inside the broker's visibility timeout (``config.celery``).
5. A run's counters are counted by the executor from the run's rows (:meth:`RunExecutor.counters`),
   never incremented: written at each chunk's end, and while a chunk works by
   :class:`core.runs.progress.LiveCounters` (the one way every run type reports live progress).
7. A run whose executor splits it into lanes (:meth:`RunExecutor.lanes`) is worked by one
   execution per lane at once, each with its own lease (:mod:`core.runs.lanes`): a chunk task
   then names its lane, and the run ends when its last lane has no work left.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.runs import dispatch, lanes, registry
from core.runs.heartbeat import side_heartbeat
from core.runs.lease import KEEP_WORKING, Lease, LeaseState  # noqa: F401 - the engine's interface
from core.runs.models import ACTIVE_STATUSES, Run, RunStatus, chunk_seconds, lease_seconds

logger = logging.getLogger(__name__)


class RunStateError(ValueError):
    """An action the run's status does not allow (e.g. cancelling a finished run)."""


class RunExecutor(ABC):
    """The work of one run type. Subclass it and register an instance with the run model
    (:func:`core.runs.registry.register`, in the app's ``ready()``)."""

    def queue(self, run: Run) -> str | None:
        """The Celery queue for this run's chunks; None is the default queue."""
        return None

    def lanes(self, run: Run) -> int:
        """How many lanes the run is worked in at once (:mod:`core.runs.lanes`); 1: one
        execution at a time. An executor answering more works, in :meth:`work_chunk`, only
        the part of the run that belongs to ``lease.lane`` of ``lease.n_lanes``."""
        return 1

    def prepare(self, run: Run, lease: Lease) -> None:
        """Before each chunk, with the lease held (e.g. read the input, link cached results)."""
        return None

    @abstractmethod
    def work_chunk(self, run: Run, lease: Lease) -> bool:
        """Work one bounded chunk, storing each result as it arrives and calling
        ``lease.beat()`` regularly (stop early unless it says HELD). Return True when work
        remains."""

    def counters(self, run: Run) -> dict[str, Any]:
        """The run's counters (``n_total``, ``n_done``, ``n_failed``, tokens, cost…) counted
        from its rows; written after each chunk and when the run ends."""
        return {}

    def outcome(self, run: Run) -> tuple[str, str]:
        """(status, error) when no work remains: ``done``, or ``failed`` with the reason."""
        return RunStatus.DONE, ""

    def on_resume(self, run: Run) -> None:
        """Reset what a new attempt should retry (e.g. failed items), in the resume transaction."""
        return None


@dataclass(frozen=True)
class ChunkOutcome:
    status: str  # more | waiting | done | failed | cancelled | busy | lost | inactive
    retry_in_s: float = 0.0


# a provider's batch holds the run's work (benchmarks.services.batch_runs): nothing chained
WAITING = "waiting"


# --- lookups ------------------------------------------------------------------------------


def run_models() -> list[type[Run]]:
    """Every concrete run model of the project."""
    return [m for m in apps.get_models() if issubclass(m, Run)]


def executor_for(model: type[Run]) -> RunExecutor:
    """The run type's executor (:mod:`core.runs.registry`)."""
    return registry.run_type(model).executor


# --- enqueueing ---------------------------------------------------------------------------


def enqueue(run: Run, *, countdown: float | None = None, lane: int | None = None) -> None:
    """Send one chunk task (:func:`run_chunk`) for ``run`` (or its lane) now (:func:`launch`
    sends on commit)."""
    queue = executor_for(type(run)).queue(run)
    args = (run._meta.label, run.pk) if lane is None else (run._meta.label, run.pk, lane)
    run_chunk.apply_async(args, countdown=countdown or None, queue=queue)


def enqueue_by_id(
    label: str, run_id: int, *, countdown: float | None = None, lane: int | None = None
) -> None:
    run = apps.get_model(label).objects.filter(pk=run_id).first()
    if run is not None and run.is_active:
        enqueue(run, countdown=countdown, lane=lane)


def launch(run: Run) -> Run:
    """Start a created (or resumed) run: its first chunk, or one per lane (the run's lanes made
    afresh), is enqueued when the current transaction commits. A broker that cannot be reached
    raises :class:`core.runs.dispatch.BrokerUnavailable` first (the caller's transaction rolls
    back: nothing half-started)."""
    dispatch.require_broker()
    n_lanes = executor_for(type(run)).lanes(run)
    what = f"{run._meta.label} {run.pk}"
    if n_lanes > 1:
        numbers = lanes.reset(run, n_lanes)
        dispatch.send_after_commit(lambda: [enqueue(run, lane=k) for k in numbers], what)
    else:
        dispatch.send_after_commit(lambda: enqueue(run), what)
    return run


# --- cancel / resume ----------------------------------------------------------------------


def cancel(run: Run) -> Run:
    """Stop a run: a queued (or orphaned) run is cancelled at once; a running one is asked to
    stop (``cancelling``) and its execution stores what is in flight, then ends it."""
    model = type(run)
    with transaction.atomic():
        locked = model.objects.select_for_update().get(pk=run.pk)
        if not locked.is_active:
            raise RunStateError(
                f"run {run.pk} is {locked.status}; only queued or running runs can be cancelled"
            )
        now = timezone.now()
        if locked.lease_is_fresh(now):
            model.objects.filter(pk=run.pk).update(status=RunStatus.CANCELLING)
        else:
            model.objects.filter(pk=run.pk).update(
                status=RunStatus.CANCELLED, finished_at=now, lease_owner=""
            )
    run.refresh_from_db()
    return run


def resume(run: Run, *, force: bool = False, enqueue: bool = True, done_too: bool = False) -> Run:
    """Queue a failed, cancelled or orphaned run again; what it finished is kept. A run that a
    live execution holds is refused unless ``force`` (you know its worker is gone). Without
    ``enqueue`` no chunk is sent: the caller works the run itself (:func:`execute_inline`).
    ``done_too``: a done run too (the caller reset what it wants worked again, e.g. its
    failures)."""
    model = type(run)
    executor = executor_for(model)
    with transaction.atomic():
        locked = model.objects.select_for_update().get(pk=run.pk)
        if locked.status == RunStatus.DONE and not done_too:
            raise RunStateError(f"run {run.pk} is done; nothing to resume")
        if locked.is_active and locked.lease_is_fresh() and not force:
            raise RunStateError(
                f"run {run.pk} is {locked.status} and its worker is alive "
                f"(last heartbeat {locked.heartbeat_at:%H:%M:%S}); use force to take it over"
            )
        model.objects.filter(pk=run.pk).update(
            status=RunStatus.QUEUED, lease_owner="", heartbeat_at=None, error="", finished_at=None
        )
        locked.refresh_from_db()
        executor.on_resume(locked)
        lanes.clear(locked)
        if enqueue:
            launch(locked)
    run.refresh_from_db()
    return run


def resume_orphans() -> list[str]:
    """Enqueue every started run (running or cancelling) that no live execution holds, e.g.
    after its worker was killed. A run whose heartbeat still looks fresh is looked at again
    when it would go stale: its worker may be the one that just died (a worker restarted within
    the lease). A run still queued that nobody took for ``RUN_QUEUED_RESEND_SECONDS`` (its
    message lost: a broker down when it was to be sent, or restarted empty) is sent again.
    Safe to repeat: an execution that finds the lease held does nothing. Returns the runs
    resumed now."""
    now = timezone.now()
    stale = now - timedelta(seconds=lease_seconds())
    resumed = _resend_queued(now)
    for model in run_models():
        started = model.objects.filter(status__in=(RunStatus.RUNNING, RunStatus.CANCELLING))
        for run in started:
            open_lanes = lanes.open_lanes(run)
            if open_lanes:
                resumed += _resume_lanes(run, open_lanes, now)
                continue
            if run.lease_is_fresh(now):
                enqueue(run, countdown=(run.heartbeat_at - stale).total_seconds() + 0.5)
            else:
                enqueue(run)
                resumed.append(f"{model._meta.label}:{run.pk}")
    return resumed


def _resend_queued(now) -> list[str]:
    waited = now - timedelta(seconds=float(getattr(settings, "RUN_QUEUED_RESEND_SECONDS", 120)))
    sent = []
    for model in run_models():
        for run in model.objects.filter(status=RunStatus.QUEUED, updated_at__lt=waited):
            model.objects.filter(pk=run.pk).update(updated_at=now)  # once a period
            numbers = [row.lane for row in lanes.open_lanes(run) if not row.lease_owner]
            for lane in numbers or [None]:
                enqueue(run, lane=lane)
            sent.append(f"{model._meta.label}:{run.pk}:queued")
    return sent


def _resume_lanes(run: Run, open_lanes: list, now) -> list[str]:
    """Requeue the open lanes of a run worked in lanes that nobody holds: a lane that never
    started is left to the broker while another lane shows the run alive."""
    resumed = []
    stale = now - timedelta(seconds=lease_seconds())
    for row in open_lanes:
        if row.heartbeat_at is not None and row.heartbeat_at >= stale:
            enqueue(run, lane=row.lane, countdown=(row.heartbeat_at - stale).total_seconds() + 0.5)
        elif row.heartbeat_at is None and run.lease_is_fresh(now):
            continue
        else:
            enqueue(run, lane=row.lane)
            resumed.append(f"{run._meta.label}:{run.pk}:lane{row.lane}")
    return resumed


# --- one execution --------------------------------------------------------------------------


def _acquire(model: type[Run], run_id: int, token: str) -> bool:
    now = timezone.now()
    stale = now - timedelta(seconds=lease_seconds())
    free = Q(lease_owner="") | Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale)
    return bool(
        model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES)
        .filter(free)
        .update(
            lease_owner=token,
            heartbeat_at=now,
            status=Case(
                When(status=RunStatus.QUEUED, then=Value(RunStatus.RUNNING)), default=F("status")
            ),
            started_at=Coalesce(F("started_at"), Value(now)),
        )
    )


def _end(run: Run, lease: Lease, *, status: str, error: str = "", **counters: Any) -> bool:
    """Finish the run if this execution still holds it."""
    return bool(
        type(run)
        .objects.filter(pk=run.pk, lease_owner=lease.token)
        .update(
            status=status,
            error=error[:5000],
            finished_at=timezone.now(),
            lease_owner="",
            **counters,
        )
    )


def _take(model: type[Run], run_id: int, lane: int | None, token: str) -> Lease | None:
    due = time.monotonic() + chunk_seconds()
    if lane is None:
        return Lease(model, run_id, token, due=due) if _acquire(model, run_id, token) else None
    n_lanes = lanes.acquire(model, run_id, lane, token)
    if n_lanes is None:
        return None
    return Lease(model, run_id, token, due=due, lane=lane, n_lanes=n_lanes)


def _busy(model: type[Run], run_id: int, lane: int | None) -> ChunkOutcome:
    """The outcome of an execution that could not take the lease: look again when the holder's
    lease would go stale, or nothing to do."""
    if lane is not None:
        left = lanes.retry_in(model, run_id, lane)
        return ChunkOutcome("inactive") if left is None else ChunkOutcome("busy", retry_in_s=left)
    run = model.objects.filter(pk=run_id).first()
    if run is None or not run.is_active:
        return ChunkOutcome("inactive")
    left = 1.0
    if run.heartbeat_at is not None:
        expires = run.heartbeat_at + timedelta(seconds=lease_seconds())
        left = (expires - timezone.now()).total_seconds()
    return ChunkOutcome("busy", retry_in_s=max(0.5, left + 0.5))


def _close(
    run: Run, lease: Lease, executor: RunExecutor, *, status: str | None, error: str = ""
) -> ChunkOutcome:
    """End this execution's work: ``status`` None when no work remains (the run's outcome from
    the executor), or ``cancelled``/``failed``. A lane ends the run only as its last lane (or
    at once on a failure, :func:`core.runs.lanes.finish`)."""
    if lease.lane is not None:
        ended = None
        for lane in [*lease.adopted, lease.lane]:  # its own lane last: it may end the run
            ended = lanes.finish(
                lease.model,
                lease.run_id,
                lane,
                lease.token,
                status=status,
                error=error,
                outcome=executor.outcome,
                counters=executor.counters,
            )
        return ChunkOutcome(ended or "lost")
    if status is None:
        status, error = executor.outcome(run)
    _end(run, lease, status=status, error=error, **executor.counters(run))
    return ChunkOutcome(str(status))


def _hand_over(run: Run, lease: Lease, counters: dict, *, chain: bool) -> ChunkOutcome:
    """Release the lease between two chunks (writing the counters) and enqueue the next chunk
    of the run or lane."""
    model = lease.model
    with transaction.atomic():
        if lease.lane is not None:
            for lane in lease.adopted:  # each adopted lane gets its own next chunk
                if lanes.release(model, lease.run_id, lane, lease.token, counters) and chain:
                    transaction.on_commit(lambda lane=lane: enqueue(run, lane=lane))
            released = lanes.release(model, lease.run_id, lease.lane, lease.token, counters)
        else:
            released = model.objects.filter(pk=lease.run_id, lease_owner=lease.token).update(
                lease_owner="", **counters
            )
        if released and chain:
            transaction.on_commit(lambda: enqueue(run, lane=lease.lane))
    return ChunkOutcome("more" if released else "lost")


def execute(
    label: str,
    run_id: int,
    *,
    lane: int | None = None,
    token: str | None = None,
    chain: bool = True,
) -> ChunkOutcome:
    """Work one chunk of a run, or of its lane ``lane`` (the body of the chunk task).
    Idempotent: what is stored is never asked again; a run (lane) held by a live execution is
    left alone (``busy``). With ``chain`` the next chunk is enqueued when work remains
    (``more``); without, the caller drives the chunks (:func:`execute_inline`)."""
    model = apps.get_model(label)
    run_type = registry.run_type(model)
    executor = run_type.executor
    if lane is None and lanes.has_open(model, run_id):
        return ChunkOutcome("inactive")  # its lanes work it
    lease = _take(model, run_id, lane, token or uuid.uuid4().hex)
    if lease is None:
        return _busy(model, run_id, lane)
    run = model.objects.get(pk=run_id)
    if run.status == RunStatus.CANCELLING:
        return _close(run, lease, executor, status=RunStatus.CANCELLED)
    try:
        with side_heartbeat(lease):
            if run_type.prepare_launch is not None:
                run_type.prepare_launch(run, lease)
            executor.prepare(run, lease)
            more = executor.work_chunk(run, lease)
    except Exception as exc:
        logger.exception("%s %s: chunk failed", label, run_id)
        _close(run, lease, executor, status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
        return ChunkOutcome("failed")
    state = lease.beat()
    if state is LeaseState.LOST:
        return ChunkOutcome("lost")
    if state is LeaseState.CANCELLING:
        return _close(run, lease, executor, status=RunStatus.CANCELLED)
    if more:  # WAITING: released, no chunk chained; beat's batch poll enqueues the next
        out = _hand_over(run, lease, executor.counters(run), chain=chain and more != WAITING)
        return ChunkOutcome(WAITING) if more == WAITING and out.status == "more" else out
    return _close(run, lease, executor, status=None)


def execute_inline(run: Run, *, on_chunk: Any = None) -> Run:
    """Drive a run's chunks in this process until it stops (no Celery worker: commands'
    ``--sync``/``--inline``). ``on_chunk(run)`` is called after each chunk (progress output)."""
    label = run._meta.label
    while True:
        outcome = execute(label, run.pk, chain=False)
        run.refresh_from_db()
        if on_chunk is not None:
            on_chunk(run)
        if outcome.status == WAITING:  # a provider's batch: look again after the poll interval
            time.sleep(float(os.environ.get("BATCH_POLL_SECONDS") or 60))
            continue
        if outcome.status != "more":
            return run


def execute_pending(model: type[Run], pk: int) -> Run | None:
    """Work the run ``model``/``pk`` in this process if it is still active (commands, tests);
    one that is gone or stopped is returned as it is."""
    run = model.objects.filter(pk=pk).first()
    if run is None or not run.is_active:
        return run
    return execute_inline(run)


# --- the chunk task -------------------------------------------------------------------------


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, name="core.run_chunk")
def run_chunk(self, label: str, run_id: int, lane: int | None = None) -> str:
    """One chunk of the run ``label`` (``app_label.ModelName``) ``run_id``, or of its lane
    ``lane`` (a run worked in lanes): the engine's one Celery task (:mod:`core.tasks` lists it
    for the workers). A run (lane) held by a live execution is looked at again when that
    execution's lease would go stale."""
    outcome = execute(label, run_id, lane=lane)
    if outcome.status == "busy":
        enqueue_by_id(label, run_id, countdown=outcome.retry_in_s, lane=lane)
    return outcome.status
