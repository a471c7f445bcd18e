"""How often a progress page polls (pure): htmx asks again after ``wait`` seconds, a wait that
grows by :data:`FACTOR` after each poll up to :data:`BUSY_MOST_S` while the run moves and up to
:data:`IDLE_MOST_S` while nothing changes (a queued run, a worker gone), and starts again at
:data:`FIRST_S` when the page is loaded. The page passes back the wait it used and a mark of
what it showed (``?wait=…&seen=…``); see :func:`next_poll`."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

FIRST_S = 1.0
FACTOR = 1.5
BUSY_MOST_S = 5.0
IDLE_MOST_S = 20.0


@dataclass(frozen=True)
class Poll:
    wait_s: float
    mark: str

    @property
    def wait(self) -> str:
        """The wait as htmx reads it in ``hx-trigger="every {{ poll.wait }}s"``."""
        return f"{self.wait_s:g}"

    @property
    def query(self) -> str:
        """``wait=…&seen=…`` for the next poll's URL."""
        return urlencode({"wait": self.wait, "seen": self.mark})


def next_poll(*, waited: str | None, seen: str | None, mark: str) -> Poll:
    """The next poll after one that waited ``waited`` seconds and had shown ``seen``; ``mark``
    is what this poll shows (e.g. status and counters). Bad or missing values start over."""
    try:
        previous = float(waited) if waited else None
    except ValueError:
        previous = None
    if previous is None or not previous > 0:  # also NaN
        return Poll(FIRST_S, mark)
    most = BUSY_MOST_S if seen != mark else IDLE_MOST_S
    return Poll(round(min(most, max(FIRST_S, previous * FACTOR)), 2), mark)
