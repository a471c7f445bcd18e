"""Real-browser fixtures: Playwright driving Debian's chromium (never a downloaded browser)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parents[1] / "perf" / "out" / "screenshots"


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM) or shutil.which(CHROMIUM) is None:
        pytest.skip(
            "Debian chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)"
        )
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread while the browser is open; the ORM
    # calls of the e2e tests stay synchronous, so Django's async guard is lifted for them only.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            yield b
            b.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


@pytest.fixture
def shots():
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
