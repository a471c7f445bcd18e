"""The database's CPU per item over a benchmark's run, and whether it stays flat.

:class:`CostSampler` samples, twice a second in a thread, the database's CPU seconds so far (a
callable: the benchmarks' own cluster, tests/perf/_pg_cluster.py, or every postgres process on
the machine) and the items stored so far (the last value of a table's id sequence: reading it
costs the same at 10 rows as at 10 million, so the sampling adds no slope of its own). After the
run, :func:`fifths` splits the window in which items were stored into five equal spans of time and gives the
database CPU per item stored in each; :func:`slope_verdict` prints one line and returns 1 when
the last fifth costs more than ``limit`` (15%) above the first: the database's cost grows with
the tables (unanalyzed tables, a missing index, a plan that scans), and the run's figures do not
hold at a larger size.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from itertools import pairwise

SLOPE_LIMIT = 0.15


class CostSampler:
    """``with CostSampler(cpu, db_url, table):`` samples ``(monotonic s, cpu s, items)``."""

    def __init__(
        self, cpu: Callable[[], float], db_url: str, table: str, interval_s: float = 0.5
    ) -> None:
        self.cpu, self.db_url, self.table, self.interval_s = cpu, db_url, table, interval_s
        self.samples: list[tuple[float, float, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn = None
        self._sequence = ""

    def _items(self) -> int:
        row = self._conn.execute(
            f"SELECT last_value, is_called FROM {self._sequence}"  # its name from the catalog
        ).fetchone()
        return int(row[0]) if row[1] else 0

    def sample(self) -> None:
        self.samples.append((time.monotonic(), self.cpu(), self._items()))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __enter__(self) -> CostSampler:
        import psycopg

        self._conn = psycopg.connect(self.db_url, autocommit=True)
        self._sequence = self._conn.execute(
            "SELECT pg_get_serial_sequence(%s, 'id')", [self.table]
        ).fetchone()[0]
        self.sample()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        self._conn.close()


def _at(samples: list[tuple[float, float, int]], t: float) -> tuple[float, float]:
    """CPU seconds and items at time ``t``, interpolated between the samples around it."""
    times = [s[0] for s in samples]
    i = min(max(bisect_left(times, t), 1), len(samples) - 1)
    (t0, c0, n0), (t1, c1, n1) = samples[i - 1], samples[i]
    f = 0.0 if t1 == t0 else min(max((t - t0) / (t1 - t0), 0.0), 1.0)
    return c0 + f * (c1 - c0), n0 + f * (n1 - n0)


def fifths(samples: list[tuple[float, float, int]]) -> list[dict]:
    """Per fifth of the sampled window: items stored, database CPU ms per item."""
    if len(samples) < 2:
        return []
    # the window in which items were stored: from the last sample before the first item to the
    # first sample after the last one (the load generator's start-up and stop left out)
    first, last = samples[0][2], samples[-1][2]
    while len(samples) > 2 and samples[1][2] == first:
        samples = samples[1:]
    while len(samples) > 2 and samples[-2][2] == last:
        samples = samples[:-1]
    if len(samples) < 2:
        return []
    start, end = samples[0][0], samples[-1][0]
    edges = [_at(samples, start + k * (end - start) / 5) for k in range(6)]
    out = []
    for (c0, n0), (c1, n1) in pairwise(edges):
        items = n1 - n0
        out.append(
            {
                "items": round(items),
                "cpu_s": round(c1 - c0, 3),
                "ms_per_item": round(1000 * (c1 - c0) / items, 2) if items >= 1 else None,
            }
        )
    return out


def slope_problem(spans: list[dict], limit: float = SLOPE_LIMIT) -> tuple[str, bool]:
    """The line that describes the database's CPU per item through the run, and whether it
    fails: the last fifth more than ``limit`` above the first (or a fifth with no item stored,
    so there is no figure)."""
    per = [s["ms_per_item"] for s in spans]
    if len(per) < 5 or per[0] is None or per[-1] is None:
        return "a fifth of the run stored no item, no figure", True
    rise = per[-1] / per[0] - 1
    line = (
        f"{per[0]} ms/item in the first fifth, {per[-1]} in the last "
        f"({rise:+.0%}; limit +{limit:.0%}); by fifth {' / '.join(str(p) for p in per)}"
    )
    if rise > limit:
        return f"the database's cost grows through the run: {line}", True
    return line, False


def slope_verdict(spans: list[dict], what: str, limit: float = SLOPE_LIMIT) -> int:
    """Print ``flat: OK …`` or ``flat: FAIL …``; 1 when :func:`slope_problem` fails."""
    line, failed = slope_problem(spans, limit)
    print(f"flat: {'FAIL' if failed else 'OK'} ({what}) {line}", flush=True)
    return int(failed)
