"""Per-process isolation of a test session, applied before Django reads its settings.

Loaded with ``-p tests.support.parallel`` (pyproject's ``addopts``), so this module is imported
before pytest-django imports ``config.settings``: the environment it sets is what the settings
read. Under pytest-xdist each test worker (``PYTEST_XDIST_WORKER=gw0``, ``gw1`` …) gets

- its own PostgreSQL database: pytest-django suffixes the test database's name (``_gw0`` …);
- its own Redis database: the number in ``CELERY_BROKER_URL`` (and in ``RATE_LIMIT_REDIS_URL``
  and ``CACHE_URL`` when they are Redis URLs) plus the worker's index, so
  ``redis://127.0.0.1:6379/8`` gives gw0 database 8, gw1 database 9 …; the number in the URL is
  the base (``make test TEST_BROKER_URL=…/8``). Celery queues, rate-limit buckets and cached
  reports of one worker are then never seen by another;
- its own ``var/`` (``HOW2REVIEW_VAR_DIR``, a fresh temporary folder, removed at the end):
  media uploads, the filesystem broker, demo passwords. Every session gets one, with or without
  xdist, so tests never write into the checkout's ``var/`` that ``make demo`` uses; an explicit
  ``HOW2REVIEW_VAR_DIR`` in the environment is kept.

Worker processes, servers and browsers that tests start inherit this environment; their ports
are chosen by the OS (port 0) and their files live under the test's ``tmp_path``, which xdist
already makes per worker.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from urllib.parse import urlsplit, urlunsplit

# Redis has 16 databases unless its `databases` setting says otherwise.
REDIS_DATABASES = int(os.environ.get("H2R_TEST_REDIS_DATABASES", "16"))
REDIS_URL_VARIABLES = ("CELERY_BROKER_URL", "RATE_LIMIT_REDIS_URL", "CACHE_URL")

_made_var_dir: str | None = None


def worker_index() -> int:
    """0 for gw0 (and for a session without xdist), 1 for gw1 …"""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


def redis_url_for_worker(url: str, index: int) -> str:
    """``url`` with its database number moved up by ``index`` (other URLs unchanged)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or index == 0:
        return url
    path = parts.path.strip("/")
    base = int(path) if path.isdigit() else 0
    db = base + index
    if db >= REDIS_DATABASES:
        raise RuntimeError(
            f"test worker {index} would use Redis database {db} of {url!r}, but Redis has "
            f"{REDIS_DATABASES} (0-{REDIS_DATABASES - 1}): lower the base database in the URL "
            "or run fewer workers (-n)"
        )
    return urlunsplit(parts._replace(path=f"/{db}"))


def isolate_environment() -> None:
    global _made_var_dir
    index = worker_index()
    for name in REDIS_URL_VARIABLES:
        if os.environ.get(name):
            os.environ[name] = redis_url_for_worker(os.environ[name], index)
    if not os.environ.get("HOW2REVIEW_VAR_DIR"):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _made_var_dir = tempfile.mkdtemp(prefix=f"h2r-test-var-{worker}-")
        os.environ["HOW2REVIEW_VAR_DIR"] = _made_var_dir


isolate_environment()


def pytest_report_header(config) -> str:
    broker = os.environ.get("CELERY_BROKER_URL", "filesystem:// (in HOW2REVIEW_VAR_DIR)")
    return f"how2review: broker {broker}, var {os.environ.get('HOW2REVIEW_VAR_DIR')}"


def pytest_unconfigure(config) -> None:
    if _made_var_dir:
        shutil.rmtree(_made_var_dir, ignore_errors=True)
