"""The writing side of a chunk that calls a model (judge runs, :mod:`judging.services.execution`;
mining batches, :mod:`mining.services.batches`; generation runs): a writer thread that stores
replies as they arrive, and the backpressure that bounds what a killed worker would re-buy —
requests sent and not yet stored — at the backend's concurrency (the requests in flight) plus
half of it (replies waiting for the writer's next commit), :func:`unstored_width`."""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection

from core.runs.engine import Lease, LeaseState
from core.runs.models import lease_seconds

FLUSH_EVERY = 256  # at most this many results per write
# after the first reply, gather what else arrives within this long (one write for a burst), unless
# the feed waits for a slot (then only what is there)
GATHER_S = float(os.environ.get("H2R_JUDGE_GATHER_S", "0.05"))
# a judge run's writer, while the feed waits for a slot: what else arrives this soon goes in the
# same write (0: one write per reply or two, ~1.5 ms of CPU each; 5 ms: ~3x fewer writes, the
# slot freed at most 5 ms later; measured: docs/performance/index.md#peers-judge)
SETTLE_S = 0.005
GATE_POLL_S = 0.01  # a feed held back by the endpoint-wide gate asks it again this often
HOLD_WAIT_S = 0.05  # a feed with nothing in flight waits this long for a slot before looking again
LIVE_EVERY_S = 1.0  # the lease's beat (cancel, chunk time) at most this often while storing
# the feed's own look at a cancel, between requests: at most this often (one indexed read), so a
# cancel is seen within this long whatever the writer's beat is doing
CANCEL_LOOK_S = 0.05


def unstored_max() -> int:
    """``H2R_JUDGE_UNSTORED_MAX``: how many requests may be sent and not yet stored (what a
    killed worker re-buys at most), for judge runs, generation runs and mining batches; 0, the
    default, means :func:`unstored_width`'s own rule."""
    return int(os.environ.get("H2R_JUDGE_UNSTORED_MAX") or 0)


def reply_margin(concurrency: int) -> int:
    """Replies that may wait for the writer's next commit on top of the requests in flight: half
    the concurrency (at least one), more than a write gathers (:data:`GATHER_S` of replies at
    the ideal rate is a quarter of the concurrency at a 200 ms model). With none, every reply
    waiting for the database holds a slot a request could use: a judge run at 64 in flight
    reached 86.6% of the ideal rate; with a quarter, 92.6–93.1%; with half, 94.9–95.0%
    (docs/performance/index.md#backpressure)."""
    return max(1, concurrency // 2)


def unstored_width(concurrency: int) -> int:
    """How many requests may be sent and not yet stored with a backend of this concurrency:
    :func:`unstored_max` when set, else the concurrency plus :func:`reply_margin`. Requests in
    flight stay at the concurrency (the backend's own gate); this bounds those and the replies
    not yet committed together, so a worker killed at any moment re-buys at most this many. One
    rule for a run's own backpressure and for the endpoint-wide gate every run on the endpoint
    shares."""
    return unstored_max() or concurrency + reply_margin(concurrency)


def heartbeat_s() -> float:
    """How often the writer beats when no reply arrives (a slow backend, a vLLM batch)."""
    return max(0.5, min(5.0, lease_seconds() / 4))


class Backpressure:
    """At most ``width`` requests sent and not yet stored: a request is sent only once a slot
    is free, and a slot frees when the writer has committed a reply. A worker killed at any
    moment therefore re-buys at most ``width`` requests (those in flight and the replies not
    yet written), never a backlog of replies waiting for the database.

    Only the thread feeding the backend calls :meth:`take` and :meth:`returned`; the writer
    calls :meth:`stored`. A backend that takes more requests than ``width`` before it answers
    any (a vLLM batch) is not held back: while the writer has nothing to store, waiting could
    not free a slot.

    With an endpoint-wide ``gate`` the feed holds only the slots it can send with: :meth:`free`
    takes at most what the feed may still send (``total``, when the caller knows how many
    requests it has, less those sent), a slot freed by a stored reply is kept for this feed's
    next request (no Redis round trip per request while the feed keeps sending) unless another
    process found the gate full lately (``release_if_wanted``, asked at most every
    :data:`GATE_POLL_S`) or the feed has nothing more to send (``total`` reached,
    :meth:`done_sending`), and :meth:`close` gives back every slot still held."""

    def __init__(self, width: int, gate: Any | None = None, total: int | None = None) -> None:
        self.width = max(1, width)
        self._cond = threading.Condition()
        self.sent = self.handed = self.written = 0
        self.waiting = False  # the feed waits for a slot: the writer writes without gathering
        # the endpoint-wide limit (a backend's ``unstored_gate()``): one slot per request sent
        # and not yet stored, across every lane, process and machine; None: this feed's own
        self.gate = gate
        self.total = total  # how many requests the feed sends at most (None: not known)
        self._tokens: list[str] = []  # the gate's slots of requests sent and not yet stored
        self._spare: list[str] = []  # the gate's slots this feed holds for its next requests
        self._sending = True  # False once the feed has nothing more to send
        self._next_try = self._next_offer = 0.0
        # set by a backend that waits for replies (benchmarks.llm.base.takes_admit): called when
        # a stored reply frees a slot the feed waits for, so it sends at once, not at its poll
        self.wake: Any | None = None

    def __call__(self) -> bool:
        """The backend's ``admit``: :meth:`free`."""
        return self.free()

    def _room(self) -> bool:
        return self.sent - self.written < self.width or self.handed == self.written

    def _wanted(self) -> int:
        """How many more slots of the gate the feed could send with now (under the lock)."""
        want = self.width - (self.sent - self.written) - len(self._spare)
        if self.total is not None:
            want = min(want, self.total - self.sent - len(self._spare))
        return want if self._sending else 0

    def take(self, should_stop) -> bool:
        """Wait for a slot; False when the feed should stop instead."""
        with self._cond:
            while self.sent - self.written >= self.width and self.handed > self.written:
                if should_stop():
                    self.waiting = False
                    return False
                self.waiting = True
                self._cond.wait(0.05)
            self.waiting = False
            token = self._spare.pop() if self._spare else None
        if self.gate is not None:
            token = token or self.gate.acquire(should_stop)
            if token is None:
                return False
        with self._cond:
            if token is not None:
                self._tokens.append(token)
            self.sent += 1
            last = self.total is not None and self.sent >= self.total
        if last:
            self.done_sending()
        return True

    def free(self) -> bool:
        """Whether :meth:`take` would not wait (a backend's ``admit``: it keeps handing over
        replies while a request waits for a slot). With a gate and no slot of it held for the
        next request, free ones are taken here for the next :meth:`take`s: as many as the feed
        may still send, asked at most every :data:`GATE_POLL_S` while replies are due. With
        nothing in flight (nothing to hand over) it waits up to :data:`HOLD_WAIT_S` for a slot
        instead — for the writer's next store, or on the gate's wake list — rather than being
        asked again and again."""
        with self._cond:
            idle = self.handed == self.sent  # nothing in flight: the feed only waits
            if not self._room() and idle:
                self._cond.wait(HOLD_WAIT_S)  # stored() notifies
            free = self._room()
            if self.total is not None and self.sent >= self.total:
                free = True  # nothing more to send: the feed's iterator ends, no slot needed
            need = free and self.gate is not None and not self._spare
            want = max(1, self._wanted())
        if need:
            now = time.monotonic()
            if idle and self.handed > self.written:
                # our own writer's next store frees a slot (kept for us): wait for it
                with self._cond:
                    if not self._spare:
                        self._cond.wait(HOLD_WAIT_S)
                free = bool(self._spare) or self._take_now(want, 0)
            elif idle:  # only another process can free one: block on the gate's wake list
                free = self._take_now(want, HOLD_WAIT_S)
            elif now < self._next_try:
                free = False
            else:
                free = self._take_now(want, 0)
                self._next_try = 0.0 if free else now + GATE_POLL_S
        self.waiting = not free
        return free

    def _take_now(self, n: int, wait: float) -> bool:
        """Up to ``n`` of the gate's free slots in one round trip, waiting up to ``wait`` s for
        at least one; kept for the next :meth:`take`s. Whether any was taken."""
        tokens = self.gate.acquire_many(n, None, wait)
        with self._cond:
            self._spare.extend(tokens)
            return bool(self._spare)

    def returned(self) -> None:
        """One reply handed to the writer."""
        with self._cond:
            self.handed += 1

    def stored(self, n: int) -> None:
        with self._cond:
            self.written += n
            freed, self._tokens = self._tokens[:n], self._tokens[n:]
            keep = max(0, min(len(freed), self._wanted()))  # for the feed's next requests
            kept, freed = freed[:keep], freed[keep:]
            self._cond.notify_all()
            wake = self.wake if self.waiting else None
        try:
            self._hand_back(freed, kept)
        finally:
            if wake is not None:  # the feed waits for this slot: it looks again now
                wake()

    def _hand_back(self, freed: list[str], kept: list[str]) -> None:
        """The gate's slots of stored replies: ``freed`` go back; ``kept`` stay with this feed
        for its next requests, unless another process waits for a slot."""
        if freed:
            self.gate.release_many(freed)  # one round trip for the batch
        if not kept:
            return
        offer = getattr(self.gate, "release_if_wanted", None)
        now = time.monotonic()
        if offer is not None and now >= self._next_offer:
            # another process waits for a slot: it gets these instead of this feed
            self._next_offer = now + GATE_POLL_S
            if offer(kept):
                return
        with self._cond:
            if self._sending:
                self._spare.extend(kept)
                kept = []
        if kept:  # done_sending() came meanwhile
            self.gate.release_many(kept)

    def done_sending(self) -> None:
        """The feed sends nothing more: the slots it kept for its next requests go back now,
        and those of the replies still to store as they are stored."""
        with self._cond:
            self._sending = False
            freed, self._spare = self._spare, []
        if freed:
            self.gate.release_many(freed)

    def close(self) -> None:
        """Give back every gate slot still held (the chunk's end: what was not stored is not
        going to be)."""
        with self._cond:
            freed, self._tokens, self._spare = self._tokens + self._spare, [], []
        if freed:
            self.gate.release_many(freed)


class ReplyWriter(threading.Thread):
    """Stores results on its own thread (and DB connection) as they arrive, so the thread that
    feeds the backend keeps every request slot busy while they are written: each write takes
    the results that came in within :data:`GATHER_S` of the first (up to :data:`FLUSH_EVERY`),
    or only those already there once the feed waits for a slot (:class:`Backpressure`: what a
    killed worker loses, in flight and not yet written, is at most :func:`unstored_width`).
    Beats the lease after each write (and every :func:`heartbeat_s` while no reply comes) and tells the feed
    to stop once the run is being cancelled or the lease is lost; what is in flight is stored."""

    _CLOSE = object()

    def __init__(
        self,
        *,
        name: str,
        store: Callable[[list], None],
        lease: Lease,
        slots: Backpressure,
        gather_s: float | None = None,
        settle_s: float = 0.0,
        replies: Callable[[list], int] = len,
    ):
        super().__init__(name=name, daemon=True)
        self.store, self.lease, self.slots = store, lease, slots
        self.gather_s = GATHER_S if gather_s is None else gather_s
        # while the feed waits for a slot: what else arrives this soon goes in the same write
        self.settle_s = settle_s
        self.replies = replies  # how many of a written batch's results held a slot
        self.results: queue.Queue = queue.Queue(maxsize=64 * FLUSH_EVERY)
        self.state = LeaseState.HELD
        self.error: BaseException | None = None
        self._state_lock = threading.Lock()
        self._feed = threading.current_thread()  # the thread that sends (and may read the run)
        self._next_look = 0.0

    def should_stop(self) -> bool:
        """True once the run is being cancelled, the lease is lost or the chunk's time is up, or
        storing failed: the feed starts no request after that. The writer's beat says so after
        its stores; the feed's thread also looks at the run itself, at most every
        :data:`CANCEL_LOOK_S`, so a cancel is seen within that long even while the writer is
        busy (other threads only read what is known)."""
        if self.state is LeaseState.HELD and self.error is None:
            now = time.monotonic()
            if now >= self._next_look and threading.current_thread() is self._feed:
                self._next_look = now + CANCEL_LOOK_S
                if self.lease.cancelling():
                    self._set_state(LeaseState.CANCELLING)
        return self.state is not LeaseState.HELD or self.error is not None

    def _set_state(self, state: LeaseState) -> None:
        """Once the feed was told to stop it stays stopped (a beat that read the run just
        before the cancel does not undo the feed's own look)."""
        with self._state_lock:
            if state is not LeaseState.HELD or self.state is LeaseState.HELD:
                self.state = state

    def submit(self, result) -> None:
        """One result for ``store`` (a judge run's ``(item input, reply or error)``)."""
        self.results.put(result)

    def close(self) -> None:
        self.results.put(self._CLOSE)
        self.join()

    def _take(self, idle: float) -> tuple[list, bool]:
        """The results waiting now (blocking for the first up to ``idle`` s); True once the
        feed has closed."""
        try:
            first = self.results.get(timeout=idle)
        except queue.Empty:
            return [], False  # no reply for a while: still alive
        batch, closed = [], first is self._CLOSE
        if not closed:
            batch.append(first)
        started = time.monotonic()
        deadline, settled = started + self.gather_s, started + min(self.settle_s, self.gather_s)
        while not closed and len(batch) < FLUSH_EVERY:
            # once the feed waits for a slot, take only what is here (or comes within settle_s):
            # its next request waits on this write
            wait = (settled if self.slots.waiting else deadline) - time.monotonic()
            try:
                if wait > 0:
                    more = self.results.get(timeout=min(wait, 0.005))
                else:
                    more = self.results.get_nowait()
            except queue.Empty:
                if wait > 0:
                    continue
                break
            if more is self._CLOSE:
                closed = True
            else:
                batch.append(more)
        return batch, closed

    def run(self) -> None:
        idle = heartbeat_s()
        last_beat = 0.0
        try:
            closed = False
            while not closed:
                batch, closed = self._take(idle)
                if self.error is not None:
                    continue
                try:
                    if batch:
                        self.store(batch)
                        self.slots.stored(self.replies(batch))
                    now = time.monotonic()
                    if not batch or closed or now - last_beat >= LIVE_EVERY_S:
                        self._set_state(self.lease.beat())
                        last_beat = now
                except BaseException as exc:  # noqa: BLE001 - re-raised by the feeding thread
                    self.error = exc
        finally:
            connection.close()
