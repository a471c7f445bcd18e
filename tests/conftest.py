"""Shared fixtures. The suite runs on PostgreSQL + Redis when DATABASE_URL / CELERY_BROKER_URL
point at them (``make test`` does), else on SQLite and the filesystem broker."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest

from tests.support.worker import running_worker


# --- The test-only run type (tests/runapp): the run engine tested without a real run type -----
def pytest_configure(config) -> None:
    """Install tests.runapp, before the test database is created (its migration makes its tables)."""
    from django.test.utils import modify_settings

    modify_settings(INSTALLED_APPS={"append": "tests.runapp"}).enable()

    from tests.support import fast_flush, template_db

    fast_flush.install()  # transactional tests end with DELETEs of the tables they wrote
    # PostgreSQL test databases are clones of a template migrated once per migration state;
    # the session's token is shared by its test workers (xdist's run id)
    token = getattr(config, "workerinput", {}).get("testrunuid") or uuid.uuid4().hex
    template_db.install(session_token=token, rebuild=bool(config.getvalue("create_db")))


# ------------------------------------------------------------------------------------------------


def pytest_sessionstart(session) -> None:
    """``make test`` (and so CI) sets HOW2REVIEW_REQUIRE_POSTGRES=1: the suite then refuses to
    run on anything but PostgreSQL, instead of silently testing SQLite."""
    if os.environ.get("HOW2REVIEW_REQUIRE_POSTGRES") != "1":
        return
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    if engine != "django.db.backends.postgresql":
        pytest.exit(
            f"HOW2REVIEW_REQUIRE_POSTGRES=1 but the database engine is {engine}: "
            "set DATABASE_URL=postgres://… (make test does)",
            returncode=3,
        )


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """PBKDF2 costs ~0.3 s per user on this machine; tests don't need it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _judge_runs_in_one_lane(settings):
    """Judge runs launched by a test are worked by one execution at a time (one chunk task per
    run), as most tests count; the tests of lanes (tests/judging/test_run_lanes.py) set
    ``JUDGE_RUN_LANES`` themselves, and real workers in a test run whatever the test launched."""
    settings.JUDGE_RUN_LANES = 1
    settings.RUN_LANES = 1  # generation and scoring runs, mining batches: the same


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker process on its own queue, reading the test database."""
    with running_worker(tmp_path) as worker:
        yield worker


@pytest.fixture
def make_user(db):
    from django.contrib.auth.models import User

    def _make(
        username: str,
        *,
        role: str | None = None,
        staff: bool = False,
        password: str = "pw-Test-12345",
    ):
        from core.roles import role_assign

        user = User.objects.create_user(username=username, password=password, is_staff=staff)
        if role:
            role_assign(user=user, role=role)
        if staff and not user.is_staff:  # e.g. an annotator wrongly given staff, to test refusals
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        return user

    return _make


# --- Real browser: Playwright driving Debian's chromium (never a downloaded browser) -----------
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = Path(__file__).resolve().parent / "perf" / "out" / "screenshots"


def chromium_missing() -> str:
    """Why the browser and accessibility tests cannot run: they fail instead of skipping, so a
    run without chromium cannot pass with its accessibility checks gone."""
    return (
        f"Debian chromium is not installed at {CHROMIUM}: the browser and accessibility tests "
        "need it. Run `make test` (it installs it through .ci/services.sh) or "
        "`apt-get install -y chromium fonts-dejavu-core`"
    )


@pytest.fixture(scope="module")
def browser():
    """One chromium per test module. Playwright's sync API runs an event loop in this thread
    while it is open, so Django's async guard is lifted for exactly that long (the tests' ORM
    calls stay synchronous) and restored afterwards."""
    if shutil.which(CHROMIUM) is None:  # a browser check never skips: it fails, as vLLM's
        pytest.fail(chromium_missing(), pytrace=False)
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
    # every browser test also checks that its pages pass the Content-Security-Policy
    violations: list[str] = []
    context.on(
        "console",
        lambda m: (
            violations.append(m.text)
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    yield pg
    context.close()
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)


@pytest.fixture
def shots():
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
