"""Runs worked in lanes: several executions work one run at once, each holding the lease of
its own lane (:class:`core.runs.models.RunLane`), so two workers on one run do twice the work.

A run type opts in with :meth:`core.runs.engine.RunExecutor.lanes` (more than 1) and splits
its work so that lane *k* of *n* never touches what another lane does (a judge run: items by
the first hex digit of their content hash, so duplicates of one content stay in one lane and
are asked once). The engine (:mod:`core.runs.engine`) then:

- creates the run's lanes when it is launched or resumed and sends one chunk task per lane;
- lets each execution take its lane's lease (a fresh token, as for a whole run), beat it (the
  run's own ``heartbeat_at`` too, so the console sees the run alive) and hand over to the
  lane's next chunk;
- ends the run when its last lane has no work left (the executor's outcome, counted from the
  rows), at once when a lane fails, and as cancelled when the last lane stops after a cancel.

These functions are the lane half of the engine; they take the run's model and id (not the
engine's ``Lease``) so that the engine can import them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.db.models.functions import Coalesce, Mod
from django.utils import timezone

from core.runs.models import ACTIVE_STATUSES, Run, RunLane, RunStatus, lease_seconds

MAX_LANES = 16  # lanes split by one hex digit


def _rows(model: type[Run], run_id: int):
    return RunLane.objects.filter(run_label=model._meta.label, run_id=run_id)


def _lock_active_run(model: type[Run], run_id: int) -> bool:
    """Lock the run's row (an active run only). Every transaction here that writes the run row
    and a lane row locks the run row first, so two never wait on each other in a cycle."""
    return (
        model.objects.select_for_update()
        .filter(pk=run_id, status__in=ACTIVE_STATUSES)
        .values_list("pk", flat=True)
        .first()
        is not None
    )


def _free(now: datetime) -> Q:
    stale = now - timedelta(seconds=lease_seconds())
    return Q(lease_owner="") | Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale)


def reset(run: Run, n_lanes: int) -> list[int]:
    """Replace the run's lanes by ``n_lanes`` fresh ones (launch, resume); an execution still
    holding an old lane loses it at its next beat. Returns the lane numbers."""
    n_lanes = max(1, min(MAX_LANES, n_lanes))
    model = type(run)
    _rows(model, run.pk).delete()
    RunLane.objects.bulk_create(
        RunLane(run_label=model._meta.label, run_id=run.pk, lane=k, n_lanes=n_lanes)
        for k in range(n_lanes)
    )
    return list(range(n_lanes))


def clear(run: Run) -> None:
    """Forget the run's lanes (a resume worked in this process, without lanes)."""
    _rows(type(run), run.pk).delete()


def has_open(model: type[Run], run_id: int) -> bool:
    """Whether the run is worked in lanes that have work left: then only lane executions may
    work it (a stray whole-run chunk message does nothing)."""
    return _rows(model, run_id).filter(done=False).exists()


def acquire(model: type[Run], run_id: int, lane: int, token: str) -> int | None:
    """Take lane ``lane`` of an active run for ``token`` (and mark the run running); the number
    of lanes, or None when the lane is held by a live execution, done, or the run inactive."""
    now = timezone.now()
    with transaction.atomic():
        if not _lock_active_run(model, run_id):
            return None
        row = (
            _rows(model, run_id)
            .select_for_update()
            .filter(lane=lane, done=False)
            .filter(_free(now))
            .first()
        )
        if row is None:
            return None
        model.objects.filter(pk=run_id).update(
            heartbeat_at=now,
            status=Case(
                When(status=RunStatus.QUEUED, then=Value(RunStatus.RUNNING)), default=F("status")
            ),
            started_at=Coalesce(F("started_at"), Value(now)),
        )
        RunLane.objects.filter(pk=row.pk).update(lease_owner=token, heartbeat_at=now)
        return row.n_lanes


def adopt(model: type[Run], run_id: int, token: str, *, held: list[int]) -> int | None:
    """Take, for ``token``, the first open lane that no live execution holds and that is not in
    ``held`` (an execution that has sent all of its lane's work goes on with another lane's
    instead of draining and handing over, :meth:`core.runs.engine.Lease.adopt`); its number, or
    None when every open lane is held or done."""
    free = (
        _rows(model, run_id)
        .filter(done=False)
        .exclude(lane__in=held)
        .filter(_free(timezone.now()))
        .order_by("lane")
        .values_list("lane", flat=True)
    )
    for lane in list(free):
        if acquire(model, run_id, lane, token) is not None:
            return lane
    return None


def retry_in(model: type[Run], run_id: int, lane: int) -> float | None:
    """After a refused :func:`acquire`: seconds until the lane's lease would go stale, or None
    when there is nothing to do (the lane is done or gone, the run inactive)."""
    row = _rows(model, run_id).filter(lane=lane, done=False).first()
    active = model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES).exists()
    if row is None or not active:
        return None
    if row.heartbeat_at is None:
        return 1.0
    expires = row.heartbeat_at + timedelta(seconds=lease_seconds())
    return max(0.5, (expires - timezone.now()).total_seconds() + 0.5)


def renew(model: type[Run], run_id: int, held: list[int], token: str) -> bool:
    """Beat the leases of the lanes ``held`` and the run's heartbeat; False when one of them is
    no longer held or the run is no longer active (another lane failed it, or it was resumed
    anew)."""
    now = timezone.now()
    mine = _rows(model, run_id).filter(lane__in=held, lease_owner=token)
    if mine.update(heartbeat_at=now) != len(set(held)):
        return False
    return bool(
        model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES).update(heartbeat_at=now)
    )


def held(model: type[Run], run_id: int, lane: int, token: str):
    """The run's row while this lane's lease is held (to guard writes to the run row)."""
    mine = _rows(model, run_id).filter(lane=lane, lease_owner=token)
    return model.objects.filter(pk=run_id, status__in=ACTIVE_STATUSES, pk__in=mine.values("run_id"))


def release(model: type[Run], run_id: int, lane: int, token: str, counters: dict) -> bool:
    """Hand the lane over to its next chunk and write the run's counters; False when the lane
    was lost meanwhile."""
    with transaction.atomic():
        if not _lock_active_run(model, run_id):
            return False
        mine = _rows(model, run_id).filter(lane=lane, lease_owner=token)
        released = mine.update(lease_owner="")
        if released:
            model.objects.filter(pk=run_id).update(**counters)
    return bool(released)


def finish(
    model: type[Run],
    run_id: int,
    lane: int,
    token: str,
    *,
    status: str | None,
    error: str,
    outcome: Callable[[Run], tuple[str, str]],
    counters: Callable[[Run], dict[str, Any]],
) -> str | None:
    """This lane stops: ``status`` None (no work left), ``cancelled`` (it saw the cancel) or
    ``failed``. A failure ends the run at once; otherwise the run ends when this was its last
    open lane (its outcome from the executor, or cancelled). Returns the run's status after
    this, ``"lane-done"`` while other lanes go on, None when the lane was lost."""
    with transaction.atomic():
        run = model.objects.select_for_update().filter(pk=run_id).first()
        mine = _rows(model, run_id).filter(lane=lane, lease_owner=token)
        if run is None or not mine.update(done=True, lease_owner=""):
            return None
        if not run.is_active:
            return run.status
        if status != RunStatus.FAILED and _rows(model, run_id).filter(done=False).exists():
            model.objects.filter(pk=run_id).update(**counters(run))
            return "lane-done"
        if status is None:
            status, error = (
                (RunStatus.CANCELLED, "") if run.status == RunStatus.CANCELLING else outcome(run)
            )
        model.objects.filter(pk=run_id).update(
            status=status,
            error=error[:5000],
            finished_at=timezone.now(),
            lease_owner="",
            **counters(run),
        )
        return str(status)


def open_lanes(run: Run) -> list[RunLane]:
    """The run's lanes with work left (the orphan scan requeues those nobody holds)."""
    return list(_rows(type(run), run.pk).filter(done=False).order_by("lane"))


# --- run types that walk their work in order (a cursor per lane) ------------------------------


def in_lane(queryset, *, lane: int | None, n_lanes: int, field: str = "pk"):
    """The rows of ``queryset`` that belong to lane ``lane`` of ``n_lanes``: ``field`` mod
    ``n_lanes`` (all of them for a run not worked in lanes)."""
    if lane is None or n_lanes <= 1:
        return queryset
    return queryset.annotate(_lane=Mod(field, n_lanes)).filter(_lane=lane)


def cursor(model: type[Run], run_id: int, lane: int) -> int:
    """Where lane ``lane`` of the run stands in its ordered work (0: at the start)."""
    value = _rows(model, run_id).filter(lane=lane).values_list("cursor", flat=True).first()
    return int(value or 0)


def advance(model: type[Run], run_id: int, lane: int, token: str, value: int) -> bool:
    """Move the lane's cursor to ``value`` while ``token`` holds the lane."""
    return bool(_rows(model, run_id).filter(lane=lane, lease_owner=token).update(cursor=value))


def visited(run: Run, field: str = "pk") -> Q | None:
    """Rows each lane has walked past (``field`` up to its lane's cursor), to filter a queryset
    annotated by :func:`annotate_lane`; None when the run has no lanes."""
    rows = list(_rows(type(run), run.pk).values_list("lane", "n_lanes", "cursor"))
    if not rows:
        return None
    walked = Q(pk__in=[])
    for lane, _n, position in rows:
        walked |= Q(_lane=lane, **{f"{field}__lte": position})
    return walked


def annotate_lane(queryset, run: Run, field: str = "pk"):
    """``queryset`` with each row's lane (``_lane``) for :func:`visited`."""
    n = _rows(type(run), run.pk).values_list("n_lanes", flat=True).first() or 1
    return queryset.annotate(_lane=Mod(field, n))


def default_lanes() -> int:
    """How many lanes generation runs, scoring runs and mining batches are worked in:
    ``settings.RUN_LANES`` (env ``H2R_RUN_LANES``, default 4), at most :data:`MAX_LANES`; 1 on
    the embedded SQLite default (one machine, whose writes SQLite serializes anyway)."""
    from django.conf import settings
    from django.db import connection

    if connection.vendor == "sqlite":
        return 1
    return max(1, min(MAX_LANES, int(getattr(settings, "RUN_LANES", 4))))
