"""The browser and accessibility tests cannot silently vanish: without chromium the ``browser``
fixture fails the test (naming ``make test`` and the apt package), as a missing vLLM does; it
never skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import tests.conftest as shared

shared.CHROMIUM = "/nonexistent/chromium"  # as on a machine without Debian's chromium


def test_a_page(page):
    page.goto("about:blank")
"""


def test_a_browser_test_fails_when_chromium_is_missing(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "-q",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(ROOT),
            str(probe),
        ],
        cwd=ROOT,
        env=os.environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "1 error" in out and "skipped" not in out, out  # an error at setup: the run fails
    assert "`make test`" in out and "apt-get install -y chromium" in out, out
