"""The saves a Locust benchmark's simulated users counted themselves (benchmarks that
cannot mislead). Locust's own CSV can miss requests that end while a run stops (246 of 5,802
saves once), so a locustfile counts each save it sent and each it saw answered, and writes
both to ``BENCH_SAVES_FILE`` when Locust quits; the benchmark reads them with :func:`read`
and checks them against the rows the server stored (tests/perf/_honest.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

SAVES = {"sent": 0, "answered": 0}


def install(events) -> None:
    """Write :data:`SAVES` to ``BENCH_SAVES_FILE`` (if set) when Locust quits."""

    @events.quitting.add_listener
    def _write_saves(environment, **kwargs):
        out = os.environ.get("BENCH_SAVES_FILE")
        if out:
            Path(out).write_text(json.dumps(SAVES))


def read(path: Path, *, users: int) -> tuple[int, int]:
    """(saves answered, saves cut off unanswered by the stop): each simulated user has one
    save in flight at most, so more than ``users`` unanswered is reported as ``users`` and the
    stored rows then disagree (the benchmark fails)."""
    saves = json.loads(Path(path).read_text())
    answered = int(saves["answered"])
    return answered, min(int(saves["sent"]) - answered, users)
