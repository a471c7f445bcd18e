"""The "Reliability and security" docs page: run the probes (tests/perf/reliability_probe.py) on the
test database (PostgreSQL as for `make test`) and print the table as Markdown; with
``--write``, replace the table in docs/performance/reliability.md between its markers.

Usage: ``.venv/bin/python tests/perf/reliability_table.py [--write] [--examples N]``
(environment as for the tests: DATABASE_URL, CELERY_BROKER_URL, TEST_DATABASE_NAME).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- reliability-table:start -->", "<!-- reliability-table:end -->"


def table(rows: list[dict]) -> str:
    lines = ["| Area | What was tried | What happened | Wrong outcomes |", "|---|---|---|---|"]
    for row in rows:
        bad = "—" if row["bad"] is None else str(row["bad"])
        cells = [row["area"], row["tried"], row["result"], bad]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="update docs/performance/reliability.md in place"
    )
    parser.add_argument("--examples", type=int, default=25, help="schemathesis cases per operation")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        env = {**os.environ, "RELIABILITY_OUT": str(out), "FUZZ_MAX_EXAMPLES": str(args.examples)}
        code = subprocess.call(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                str(Path(__file__).with_name("reliability_probe.py")),
            ],
            cwd=ROOT,
            env=env,
        )
        rows = json.loads(out.read_text()) if out.exists() else []
    text = table(rows)
    print(text)
    if args.write:
        readme = ROOT / "docs" / "performance" / "reliability.md"
        content = readme.read_text(encoding="utf-8")
        if START not in content or END not in content:
            print(f"{readme} has no {START} … {END} markers", file=sys.stderr)
            return 2
        head, rest = content.split(START, 1)
        _, tail = rest.split(END, 1)
        readme.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
