"""How many PostgreSQL connections each kind of process opens (for sizing PostgreSQL's
``max_connections`` or a pgbouncer pool), counted in ``pg_stat_activity``:

1. gunicorn web workers (sync, one thread each) after answering requests;
2. a Celery worker (prefork) while it works a judge run, and once the run has ended;
3. Celery beat.

Run: ``.venv/bin/python tests/perf/bench_connections.py [--web-workers 3] [--concurrency 2]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review; a scratch
database ``bench_h2r_conns`` is created and dropped), ``CELERY_BROKER_URL`` (default
redis://127.0.0.1:6379/0).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_conns"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from tests.perf._honest import Ledger  # noqa: E402

LEDGER = Ledger("connections")


def others() -> int:
    """Connections to the scratch database other than this script's own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [connection.settings_dict["NAME"]],
        )
        return cursor.fetchone()[0]


def peak(seconds: float, until=None) -> int:
    best, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline and not (until and until()):
        best = max(best, others())
        time.sleep(0.1)
    return best


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env() -> dict[str, str]:
    from tests.support.worker import database_url_for_current_connection

    return {**os.environ, "DATABASE_URL": database_url_for_current_connection()}


def web(workers: int) -> tuple[int, int]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        idle = others()
        for _ in range(20 * workers):  # every worker answers some (the kernel spreads them)
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/healthz/ready", timeout=5
                ) as r:
                    LEDGER.request(r.status, detail="/healthz/ready")
            except urllib.error.HTTPError as exc:  # a refused request fails the benchmark
                LEDGER.request(exc.code, detail="/healthz/ready")
        return idle, others()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def worker_and_beat(concurrency: int) -> dict[str, int]:
    from judging.models import JudgeRun
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.judging.factories import make_data
    from tests.judging.support import judge_responder
    from tests.support.llm_server import LLMTestServer
    from tests.support.worker import start_worker

    data = make_data(n=1500)
    with LLMTestServer(responder=judge_responder, latency_s=0.2) as server:
        judge = judge_services.judge_create(
            name="conns", backend="openai", base_url=server.base_url, model="m", concurrency=16
        )
        with tempfile.TemporaryDirectory() as tmp:
            worker = start_worker(Path(tmp), concurrency=concurrency)
            try:
                time.sleep(2)
                ready = others()
                run = services.judge_run_create(
                    judge=judge, selection={"dataset": data["dataset"].pk}
                )
                running = peak(
                    60,
                    until=lambda: (
                        not JudgeRun.objects.filter(
                            pk=run.pk, status__in=("queued", "running")
                        ).exists()
                    ),
                )
                time.sleep(1)
                after = others()
                run.refresh_from_db()
                LEDGER.request(200, ok=run.status == JudgeRun.Status.DONE, detail=run.status)
                LEDGER.expect("run items judged", run.n_total, after=run.n_done)
                beat = subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "config", "beat", "-s", f"{tmp}/sched"],
                    cwd=ROOT,
                    env={**child_env(), "CELERY_DEFAULT_QUEUE": worker.queue},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                try:
                    with_beat = peak(8)
                finally:
                    beat.terminate()
                    beat.wait(timeout=20)
            finally:
                worker.stop()
    return {"ready": ready, "running": running, "after": after, "with_beat": with_beat}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        idle, served = web(args.web_workers)
        print(
            f"gunicorn -w {args.web_workers}: {idle} connection(s) idle at start, {served} after "
            f"requests (DB_CONN_MAX_AGE keeps one per worker process)"
        )
        w = worker_and_beat(args.concurrency)
        print(
            f"celery worker -c {args.concurrency}: {w['ready']} when ready, peak {w['running']} "
            f"while one judge run is worked, {w['after']} after it ended"
        )
        print(f"celery beat (with that worker idle): {w['with_beat'] - w['after']} more")
        return LEDGER.verdict()
    finally:
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
