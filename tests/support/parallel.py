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

Scheduling (``--dist loadgroup``): a module whose tests share a fixture of wider scope than a
test (a browser, a worker holding a vLLM engine) or that starts real processes (marked
``worker`` or ``e2e``) runs whole on one test worker, so the fixture is built once; the modules
that use a run-wide process (the vLLM server, :data:`ONE_PER_RUN`) run on one test worker
together, so that process starts once for the whole run; these
modules are handed out first, heaviest groups first, and the many light tests fill the workers
up behind them, so the run does not end waiting on one late heavy module.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from urllib.parse import urlsplit, urlunsplit

import pytest

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
    # a pytest that a test starts inherits the worker's variables: move the URLs once only
    if os.environ.get("H2R_TEST_WORKER_ISOLATED") != os.environ.get("PYTEST_XDIST_WORKER", ""):
        for name in REDIS_URL_VARIABLES:
            if os.environ.get(name):
                os.environ[name] = redis_url_for_worker(os.environ[name], index)
        os.environ["H2R_TEST_WORKER_ISOLATED"] = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not os.environ.get("HOW2REVIEW_VAR_DIR"):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _made_var_dir = tempfile.mkdtemp(prefix=f"h2r-test-var-{worker}-")
        os.environ["HOW2REVIEW_VAR_DIR"] = _made_var_dir


isolate_environment()


def pytest_report_header(config) -> str:
    broker = os.environ.get("CELERY_BROKER_URL", "filesystem:// (in HOW2REVIEW_VAR_DIR)")
    return f"how2review: broker {broker}, var {os.environ.get('HOW2REVIEW_VAR_DIR')}"


SHARED_SCOPES = {"module", "package", "class", "session"}
HEAVY_MARKS = ("worker", "e2e")


# Session fixtures that are a process (a server with a model loaded): every module that uses one
# runs on one test worker, so the process is started once for the run, not once per test worker.
ONE_PER_RUN = frozenset({"vllm_server"})


def _group(item) -> str | None:
    """The test's xdist group: the fixture's name for a fixture of :data:`ONE_PER_RUN`, else its
    module when it uses a fixture of the suite's own (not pytest-django's) wider than one test
    or is marked heavy; None for a lone test."""
    info = getattr(item, "_fixtureinfo", None)
    shared = False
    for name, defs in info.name2fixturedefs.items() if info else ():
        fixture = defs[-1] if defs else None
        module = getattr(getattr(fixture, "func", None), "__module__", "") or ""
        if fixture and fixture.scope in SHARED_SCOPES and module.startswith("tests."):
            if name in ONE_PER_RUN:
                return name
            shared = True
    if shared or any(item.get_closest_marker(m) for m in HEAVY_MARKS):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist turns xdist_group marks into groups
def pytest_collection_modifyitems(config, items) -> None:
    groups = {item: _group(item) for item in items}
    # a module with one test on a run-wide process goes whole to that process's group
    module_group = {
        item.nodeid.split("::", 1)[0]: group
        for item, group in groups.items()
        if group in ONE_PER_RUN
    }
    for item, group in groups.items():
        group = module_group.get(item.nodeid.split("::", 1)[0], group)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class GroupsFirst(LoadGroupScheduling):
        """Grouped modules (their scope is the module path; a lone test's has ``::``) are given
        out before lone tests; xdist already orders the queue by tests per unit. A test worker
        gets its next unit when it starts the last test it has (xdist: when 2 are left), so a
        heavy module is not queued behind another on a worker while others go idle."""

        def _assign_work_unit(self, node) -> None:
            group = next((scope for scope in self.workqueue if "::" not in scope), None)
            if group is not None:
                self.workqueue.move_to_end(group, last=False)
            super()._assign_work_unit(node)

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) <= 1:
                self._assign_work_unit(node)

    return GroupsFirst(config, log)


def pytest_unconfigure(config) -> None:
    if _made_var_dir:
        shutil.rmtree(_made_var_dir, ignore_errors=True)
