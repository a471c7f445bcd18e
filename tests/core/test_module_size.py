"""No Python module of the project is over 500 lines (the house rule: a module that long holds
more than one thing; split it where it divides, as tests/perf/_annotation_server.py was split off
bench_annotation.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500


def test_no_module_is_over_500_lines():
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(tracked) > 100  # the project's files were found
    long = {
        path: n
        for path in tracked
        if (ROOT / path).exists()
        and (n := len((ROOT / path).read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"over {MAX_LINES} lines: {long}"
