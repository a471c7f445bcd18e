"""A run's lease: the right of one execution to work one run, or one lane of it (and the lanes
it adopted), renewed by its heartbeat (:mod:`core.runs.engine`, :mod:`core.runs.lanes`)."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field

from django.utils import timezone

from core.runs import lanes
from core.runs.models import Run, RunStatus


class LeaseState(enum.Enum):
    HELD = "held"
    CANCELLING = "cancelling"
    LOST = "lost"
    # held, but the chunk's time (RUN_CHUNK_SECONDS) is up: store what is in flight and return
    # True ("more"); the next chunk goes on. Keeps every chunk shorter than the broker's
    # visibility timeout, whatever the backend's speed.
    DUE = "due"


# what a one-step executor (an estimate, a leaderboard, a promotion) may store its result under:
# its step cannot be split, so a chunk whose time is up still stores what it computed
KEEP_WORKING = (LeaseState.HELD, LeaseState.DUE)


@dataclass(frozen=True)
class Lease:
    """The right of one execution to work one run, or one lane of it (``lane``; the executor
    then works only that lane's part, :meth:`RunExecutor.lanes`), plus the lanes it adopted
    (:meth:`adopt`)."""

    model: type[Run]
    run_id: int
    token: str
    due: float = 0.0  # time.monotonic() when the chunk should stop taking new work; 0: never
    lane: int | None = None
    n_lanes: int = 1
    adopted: list[int] = field(default_factory=list, compare=False)

    def held_lanes(self) -> list[int]:
        """The lanes this execution holds: its own, then those it adopted."""
        return [] if self.lane is None else [self.lane, *self.adopted]

    def adopt(self) -> int | None:
        """Take another open lane nobody holds (:func:`core.runs.lanes.adopt`), when this
        execution has sent all of its own lanes' work and its chunk's time is not up: one worker
        then goes from lane to lane without draining its requests in flight and waiting for the
        next chunk task between them. The lane's number, or None."""
        if self.lane is None or (self.due and time.monotonic() >= self.due):
            return None
        lane = lanes.adopt(self.model, self.run_id, self.token, held=self.held_lanes())
        if lane is not None:
            self.adopted.append(lane)
        return lane

    def renew(self) -> bool:
        """Beat the heartbeat; False when the lease is no longer held."""
        if self.lane is not None:
            return lanes.renew(self.model, self.run_id, self.held_lanes(), self.token)
        return bool(
            self.model.objects.filter(pk=self.run_id, lease_owner=self.token).update(
                heartbeat_at=timezone.now()
            )
        )

    def held(self):
        """The run's row while this lease is held: guard every write to the run row with it."""
        if self.lane is not None:
            return lanes.held(self.model, self.run_id, self.lane, self.token)
        return self.model.objects.filter(pk=self.run_id, lease_owner=self.token)

    def cancelling(self) -> bool:
        """Whether the run is being cancelled: one indexed read, cheap enough to ask between
        requests (:meth:`core.runs.reply_writer.ReplyWriter.should_stop`)."""
        return self.model.objects.filter(pk=self.run_id, status=RunStatus.CANCELLING).exists()

    def beat(self) -> LeaseState:
        """Renew the heartbeat; say whether the lease is still held, whether the run is being
        cancelled and whether the chunk's time is up (``DUE``). Cheap (two or three indexed
        statements): call it after each stored batch. Anything but ``HELD`` means: send
        nothing new, store what is in flight, return."""
        if not self.renew():
            return LeaseState.LOST
        status = self.model.objects.filter(pk=self.run_id).values_list("status", flat=True).first()
        if status == RunStatus.CANCELLING:
            return LeaseState.CANCELLING
        if self.due and time.monotonic() >= self.due:
            return LeaseState.DUE
        return LeaseState.HELD
