"""Run a real Celery worker process against the test database and the configured broker.

Used by tests whose behaviour under test is the worker's. The worker gets its own queue name
so that parallel test sessions sharing one Redis never steal each other's tasks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url_for_current_connection() -> str:
    """The URL of the database this test process is using (the test database)."""
    s = connection.settings_dict
    engine = s["ENGINE"]
    if engine.endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    if "postgresql" in engine:
        user = quote(s.get("USER") or "")
        password = quote(s.get("PASSWORD") or "")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        host = s.get("HOST") or "127.0.0.1"
        port = s.get("PORT") or 5432
        return f"postgres://{auth}{host}:{port}/{s['NAME']}"
    raise RuntimeError(f"unsupported engine for a worker process: {engine}")


class WorkerProcess:
    def __init__(self, proc: subprocess.Popen, queue: str, log_path: Path) -> None:
        self.proc = proc
        self.queue = queue
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole worker (a crash, not a shutdown)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def start_worker(
    tmp_path: Path,
    *,
    queue: str | None = None,
    concurrency: int = 2,
    pool: str = "prefork",
    extra_env: dict[str, str] | None = None,
) -> WorkerProcess:
    from config.celery import app

    queue = queue or f"test-{uuid.uuid4().hex[:10]}"
    app.conf.task_default_queue = queue
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": database_url_for_current_connection(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_DEFAULT_QUEUE": queue,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(extra_env or {})
    log_path = tmp_path / f"worker-{queue}.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the worker writes to it for its lifetime
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            queue,
            "--pool",
            pool,
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-n",
            f"{queue}@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    worker = WorkerProcess(proc, queue, log_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited early:\n{worker.log()}")
        if "ready." in worker.log():
            return worker
        time.sleep(0.2)
    worker.stop()
    raise RuntimeError(f"worker did not become ready:\n{worker.log()}")


@contextmanager
def running_worker(tmp_path: Path, **kwargs) -> Iterator[WorkerProcess]:
    from config.celery import app

    previous = app.conf.task_default_queue
    worker = start_worker(tmp_path, **kwargs)
    try:
        yield worker
    finally:
        worker.stop()
        app.conf.task_default_queue = previous


def wait_for(
    predicate, *, timeout: float = 60.0, interval: float = 0.2, message: str = "condition"
):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def run_web_probe(module: str, *args: str, timeout: int = 120) -> dict:
    """Run ``python -m module *args`` as a fresh web process on the test database and return
    the JSON object it prints last (the probes of tests/support); its stderr on failure."""
    import json

    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_current_connection(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    out = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])
