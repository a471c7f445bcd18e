"""Following a run from a command: a one-line progress bar and waiting until the run stops.

The one home for commands' ``--wait`` / ``--inline`` (``--sync``): ``manage.py bench`` and
``manage.py mine`` both wait through :func:`wait` and draw :class:`Progress`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from core.runs import engine


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
    polled while the workers work it. Ctrl-C cancels it (``cancel(run)``, the run type's
    service) and re-raises."""
    try:
        if inline:
            return engine.execute_inline(run, on_chunk=on_progress)
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
