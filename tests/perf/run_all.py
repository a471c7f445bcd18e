"""Run every benchmark under tests/perf/ one after another and print their figures.

Usage: ``make perf`` (PostgreSQL + Redis as for the tests), or
``.venv/bin/python tests/perf/run_all.py [name ...]`` to run some, e.g. ``import judge_run``.
Each benchmark is a standalone script (``bench_<name>.py``); they are never collected by pytest.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    scripts = [
        s for s in scripts if not s.stem.endswith(("_settings", "_urls"))
    ]  # helpers, not benchmarks
    if argv:
        wanted = {f"bench_{name.removeprefix('bench_')}" for name in argv}
        unknown = wanted - {s.stem for s in scripts}
        if unknown:
            print(
                f"unknown benchmark(s): {', '.join(sorted(unknown))}; have: "
                f"{', '.join(s.stem.removeprefix('bench_') for s in scripts)}",
                file=sys.stderr,
            )
            return 2
        scripts = [s for s in scripts if s.stem in wanted]
    failed = []
    for script in scripts:
        print(f"\n=== {script.name} ===", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, str(script)], cwd=ROOT)
        print(f"--- {script.name}: exit {code} in {time.monotonic() - started:.1f} s", flush=True)
        if code:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
