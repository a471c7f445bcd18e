"""A run's live progress, the same way for every run type, and following a run from a command.

:class:`LiveCounters` is how every run type reports progress while a chunk works: the run's
counters (``n_total``, ``n_done``, ``n_failed``, tokens, cost…) are counted from its rows by its
executor (:meth:`core.runs.engine.RunExecutor.counters`) and written to the run row under the
chunk's lease, never incremented (DESIGN: "A run's counters are counted from its item rows,
never incremented"). A count repeated, or written by two lanes of one run, is still right.

The one home for commands' ``--wait`` / ``--inline`` (``--sync``): ``manage.py bench`` and
``manage.py mine`` both wait through :func:`wait` and draw :class:`Progress`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from core.runs import dispatch, engine
from core.runs.engine import Lease

# live counters are written at most this often (a progress page polls every 1.5 s or more), and
# counting them takes at most about 1 / LIVE_COUNT_SHARE of a chunk's time (a count of 100 ms
# waits 2 s before the next)
LIVE_COUNT_EVERY_S = 1.0
LIVE_COUNT_SHARE = 20


class LiveCounters:
    """The live counters of the run a chunk works (``lease``): :meth:`write` after each stored
    batch writes ``counters(run)`` — the executor's, counted from the run's rows — to the run
    row while the lease is held, at most every :data:`LIVE_COUNT_EVERY_S` and at most about
    1/:data:`LIVE_COUNT_SHARE` of the time (a slow count on a large run waits longer). The
    chunk's end writes them once more (the engine)."""

    def __init__(
        self,
        run: Any,
        lease: Lease,
        counters: Callable[[Any], dict[str, Any]] | None = None,
        *,
        every_s: float = LIVE_COUNT_EVERY_S,
    ) -> None:
        self.run, self.lease = run, lease
        self.counters = counters or engine.executor_for(type(run)).counters
        self.every_s = every_s
        self.next_at = 0.0
        self.writes = 0

    def write(self, *, force: bool = False) -> bool:
        """Count and write now if it is time (or ``force``); False when not written."""
        start = time.monotonic()
        if not force and start < self.next_at:
            return False
        counts = self.counters(self.run)
        took = time.monotonic() - start
        self.next_at = time.monotonic() + max(self.every_s, took * LIVE_COUNT_SHARE)
        if not counts:
            return False
        self.writes += 1
        return bool(self.lease.held().update(**counts))


class Progress:
    """A one-line progress bar (``\\r``-redrawn on a terminal; one line at the end otherwise)."""

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label, self.stream = label, stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.last = ""

    def __call__(self, run: Any) -> None:
        total, done = max(run.n_total or 0, 0), run.n_done or 0
        width = 30
        filled = int(width * done / total) if total else 0
        text = (
            f"  {self.label} [{'#' * filled}{'-' * (width - filled)}] {done}/{total} {run.status}"
        )
        if text == self.last:
            return
        self.last = text
        if self.tty:
            self.stream.write("\r" + text)
            if not run.is_active:
                self.stream.write("\n")
        elif not run.is_active:
            self.stream.write(text + "\n")
        self.stream.flush()


def wait(
    run,
    *,
    inline: bool = False,
    on_progress: Callable[[Any], None] | None = None,
    poll_s: float = 0.5,
    cancel: Callable[[Any], Any] | None = None,
):
    """Until ``run`` stops: worked in this process with ``inline`` (no worker needed), else
    polled while the workers work it (:class:`core.runs.dispatch.NoWorker` at once when no live
    worker consumes the run's queue). Ctrl-C cancels it (``cancel(run)``, the run type's
    service) and re-raises."""
    try:
        if inline:
            return engine.execute_inline(run, on_chunk=on_progress)
        if run.status == run.Status.QUEUED:  # dispatch.NoWorker unless a worker consumes it
            dispatch.require_worker(engine.executor_for(type(run)).queue(run))
        while True:
            run.refresh_from_db()
            if on_progress is not None:
                on_progress(run)
            if not run.is_active:
                return run
            time.sleep(poll_s)
    except KeyboardInterrupt:
        run.refresh_from_db()
        if run.is_active and cancel is not None:
            cancel(run)
        raise
