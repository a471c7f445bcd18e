"""Benchmarks that cannot mislead: a benchmark that simulates users or requests
checks, after its run, that the server stored what the benchmark counted, and that no simulated
user or request was refused; otherwise it says so and exits non-zero.

- :class:`Ledger`: what a benchmark counted (requests by outcome, users that got in) and what
  the server stored (rows added, counted in the database before and after).
- :func:`locust_refusals`: the failed requests of a Locust run (every request name, the setup
  ones included), read from its ``--csv`` files.
- :meth:`Ledger.verdict` prints one line (``honest: …``) and returns 0 or 1, the exit code.

Used by bench_annotation.py (with locustfile_annotation.py), bench_reward.py, bench_launch.py,
bench_connections.py and bench_memory.py (bench_judge_run.py asserts its own counts).
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Ledger:
    """One benchmark's accounting: ``expect(name, counted, before)`` then ``stored(name, after)``
    per kind of row; ``request(status, ok)`` per simulated request; ``users(asked, served)``."""

    name: str
    counted: dict[str, int] = field(default_factory=dict)
    in_flight: dict[str, int] = field(default_factory=dict)
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    statuses: Counter = field(default_factory=Counter)
    refusals: list[str] = field(default_factory=list)
    users_asked: int | None = None
    users_served: int | None = None

    def expect(
        self,
        what: str,
        counted: int,
        *,
        before: int = 0,
        after: int | None = None,
        in_flight: int = 0,
    ):
        """The benchmark counted ``counted`` writes of ``what``; the table held ``before`` rows
        before the run (and ``after`` once it ended, or give it later to :meth:`stored`).
        ``in_flight``: writes sent but cut off unanswered when the run stopped (the server may
        have stored them): the rows added must then lie in counted … counted + in_flight."""
        self.counted[what] = int(counted)
        self.in_flight[what] = int(in_flight)
        self.before[what] = int(before)
        if after is not None:
            self.after[what] = int(after)
        return self

    def stored(self, what: str, after: int) -> Ledger:
        self.after[what] = int(after)
        return self

    def request(self, status: int, *, ok: bool | None = None, detail: str = "") -> bool:
        """Count one simulated request; ``ok`` defaults to status < 400. A refused one (not ok)
        is kept with its status and ``detail`` (the first 20 are shown)."""
        ok = status < 400 if ok is None else ok
        self.statuses[status] += 1
        if not ok:
            self.refusals.append(f"{status} {detail}".strip()[:300])
        return ok

    def refused(self, count: int, detail: str) -> Ledger:
        """Refusals counted elsewhere (e.g. Locust's failures)."""
        self.refusals.extend([detail[:300]] * int(count))
        return self

    def users(self, asked: int, served: int) -> Ledger:
        self.users_asked, self.users_served = int(asked), int(served)
        return self

    def problems(self) -> list[str]:
        out = []
        for what, counted in self.counted.items():
            if what not in self.after:
                out.append(f"{what}: the rows stored were never counted")
                continue
            added = self.after[what] - self.before[what]
            cut = self.in_flight.get(what, 0)
            if not counted <= added <= counted + cut:
                out.append(
                    f"{what}: the server stored {added:,} rows, the benchmark counted {counted:,}"
                    f" (+ up to {cut:,} cut off in flight at the stop)"
                )
        if self.users_asked is not None and self.users_served != self.users_asked:
            out.append(
                f"{self.users_asked - (self.users_served or 0):,} of {self.users_asked:,} simulated "
                "users did not get in"
            )
        if self.refusals:
            shown = Counter(self.refusals).most_common(5)
            out.append(
                f"{len(self.refusals):,} request(s) refused or failed: "
                + "; ".join(f"{n}x {text}" for text, n in shown)
            )
        return out

    def verdict(self) -> int:
        """Print the one-line verdict; 0 when everything counted was stored and nothing was
        refused, else 1 (the benchmark's exit code: its figures are not to be reported)."""
        problems = self.problems()
        stored = ", ".join(
            f"{what} {self.after.get(what, 0) - self.before[what]:,} stored = {n:,} counted"
            + (
                f" + up to {self.in_flight[what]:,} cut off at the stop"
                if self.in_flight[what]
                else ""
            )
            for what, n in self.counted.items()
        )
        users = (
            f"; users {self.users_served:,}/{self.users_asked:,} in"
            if self.users_asked is not None
            else ""
        )
        if problems:
            print(f"honest: FAIL ({self.name}): " + " | ".join(problems), flush=True)
            return 1
        print(
            f"honest: OK ({self.name}): {stored or 'nothing stored'}{users}; 0 refused",
            flush=True,
        )
        return 0


def locust_refusals(prefix: Path | str) -> tuple[int, list[str]]:
    """Failed requests of a Locust run written with ``--csv prefix``: (count over every request
    name, setup included, "name: error (n)" lines from the failures file)."""
    total = 0
    with open(f"{prefix}_stats.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["Name"] == "Aggregated":
                total = int(row["Failure Count"])
    lines = []
    failures = Path(f"{prefix}_failures.csv")
    if failures.exists():
        with open(failures, newline="") as fh:
            for row in csv.DictReader(fh):
                lines.append(f"{row['Name']}: {row['Error']} ({row['Occurrences']})")
    return total, lines
