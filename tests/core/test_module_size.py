"""Module length is a signal to look, never a target to meet.

A Python module past 500 lines usually holds more than one thing; then it is split where its
meaning divides, and the new modules are named for what they hold (as the annotation benchmark's
server harness and its study were split off tests/perf/bench_annotation.py). Sometimes a long
module is one thing. Then it is listed in ``LONG_MODULES`` with one sentence saying why it is one
thing, so that growing past 500 lines is always a decision someone made (a split or a reasoned
entry), never a prompt to squeeze docstrings, blank lines or calls until the count fits.

An entry whose module has come back under 450 lines is stale and fails: the list names only
modules that are long now.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIGNAL_LINES = 500  # past this, a module is split or listed below
STALE_BELOW = 450  # a listed module shorter than this leaves the list

# path -> one sentence: why this module is one thing although it is long
LONG_MODULES: dict[str, str] = {}


def line_counts() -> dict[str, int]:
    """Lines of every tracked Python module of the project."""
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        path: len((ROOT / path).read_text(encoding="utf-8").splitlines())
        for path in tracked
        if (ROOT / path).exists()
    }


def unexplained(counts: dict[str, int], listed: dict[str, str]) -> dict[str, int]:
    """Modules past ``SIGNAL_LINES`` that the list does not explain."""
    return {p: n for p, n in counts.items() if n > SIGNAL_LINES and p not in listed}


def stale(counts: dict[str, int], listed: dict[str, str]) -> dict[str, int | None]:
    """Listed modules that are gone (None) or shorter than ``STALE_BELOW``."""
    return {p: counts.get(p) for p in listed if p not in counts or counts[p] < STALE_BELOW}


def not_one_sentence(listed: dict[str, str]) -> list[str]:
    """Entries whose reason is not one sentence: too short to say anything, not ended by a full
    stop, or a second sentence begun inside it."""
    return [
        p
        for p, why in listed.items()
        if len(why.strip()) < 20
        or not why.strip().endswith(".")
        or re.search(r"[.!?]\s+[A-Z]", why.strip())
    ]


def test_a_module_past_500_lines_is_split_or_listed_with_its_reason():
    counts = line_counts()
    assert len(counts) > 100  # the project's files were found
    assert unexplained(counts, LONG_MODULES) == {}, (
        f"past {SIGNAL_LINES} lines: split each where its meaning divides, or, if it is one "
        "thing, add it to LONG_MODULES with one sentence saying why (never trim text to fit)"
    )


def test_every_listed_module_is_still_long_and_its_reason_one_sentence():
    counts = line_counts()
    assert stale(counts, LONG_MODULES) == {}, f"under {STALE_BELOW} lines or gone: drop the entry"
    assert not_one_sentence(LONG_MODULES) == []


def test_the_checks_catch_what_they_are_for():
    counts = {"a.py": 501, "b.py": 500, "c.py": 449, "d.py": 450}
    assert unexplained(counts, {}) == {"a.py": 501}
    assert unexplained(counts, {"a.py": "The one parser of the format, rule by rule."}) == {}
    listed = {"c.py": "x.", "d.py": "y.", "gone.py": "z."}
    assert stale(counts, listed) == {"c.py": 449, "gone.py": None}
    assert not_one_sentence(
        {
            "ok.py": "The one parser of the format, rule by rule (e.g. each field in turn).",
            "empty.py": "",
            "two.py": "It is long. It is one thing anyway.",
            "no-stop.py": "the one parser of the format",
        }
    ) == ["empty.py", "two.py", "no-stop.py"]
