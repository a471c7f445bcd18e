"""Two Celery workers on one judge run against one worker: throughput, duplicate
judgments and extra LLM requests. Each setting judges a fresh run of ``--n`` items through real
worker processes (prefork, ``-c 1`` each), PostgreSQL and Redis, against the local
OpenAI-compatible test server answering after ``--latency`` s, at the judge's ``--concurrency``.
The run is worked in ``--lanes`` lanes (``H2R_JUDGE_LANES``, default 4; core.runs.lanes), one
lease each, so the two workers work the same run at once; ``--lanes 1`` shows the old engine
(one execution per run at a time).

Run: ``.venv/bin/python tests/perf/bench_two_workers.py [--n 3000] [--latency 0.2]
[--concurrency 32] [--chunk 500] [--lanes 4]``. Environment as for bench_judge_run.py (a scratch database
``bench_h2r_two_workers``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_two_workers"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402


def one_setting(
    *, workers: int, n: int, latency: float, concurrency: int, chunk: int, lanes: int
) -> dict:
    from django.conf import settings

    from judging.models import JudgeRun, JudgeRunItem, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.judging.factories import make_data
    from tests.judging.support import judge_responder
    from tests.support.llm_server import LLMTestServer
    from tests.support.worker import start_worker

    settings.JUDGE_RUN_LANES = lanes  # read at launch, in this process
    tag = f"w{workers}-l{lanes}-c{concurrency}"
    data = make_data(n=n, dataset=tag, generators=(f"{tag}-gen",))
    env = {"H2R_JUDGE_CHUNK_ITEMS": str(chunk)}
    with (
        LLMTestServer(responder=judge_responder, latency_s=latency) as server,
        tempfile.TemporaryDirectory() as tmp,
        ExitStack() as stack,
    ):
        judge = judge_services.judge_create(
            name=f"two-{tag}",
            backend="openai",
            base_url=server.base_url,
            model="m",
            concurrency=concurrency,
            timeout_s=30,
        )
        (Path(tmp) / "0").mkdir()
        first = start_worker(Path(tmp) / "0", concurrency=1, extra_env=env)
        stack.callback(first.stop)
        for k in range(1, workers):
            (Path(tmp) / str(k)).mkdir()
            other = start_worker(
                Path(tmp) / str(k), concurrency=1, extra_env=env, queue=first.queue
            )
            stack.callback(other.stop)
        t0 = time.perf_counter()
        run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
        while JudgeRun.objects.filter(pk=run.pk, status__in=("queued", "running")).exists():
            time.sleep(0.1)
        elapsed = time.perf_counter() - t0
        run.refresh_from_db()
        items = JudgeRunItem.objects.filter(run=run, judgment__isnull=False)
        return {
            "status": run.status,
            "rate": n / elapsed,
            "elapsed": elapsed,
            "extra_requests": len(server.requests) - n,
            "duplicates": items.count()
            - items.values("judgment").distinct().count()
            + (Judgment.objects.filter(judge=judge).count() - n),
        }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--lanes", type=int, default=4)
    args = parser.parse_args()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        results = {}
        for workers in (1, 2):
            r = one_setting(
                workers=workers,
                n=args.n,
                latency=args.latency,
                concurrency=args.concurrency,
                chunk=args.chunk,
                lanes=args.lanes,
            )
            results[workers] = r
            print(
                f"{workers} worker(s), {args.lanes} lane(s), concurrency {args.concurrency}: "
                f"{r['status']}, {args.n} judgments in {r['elapsed']:.1f}s = "
                f"{r['rate']:.1f}/s; extra LLM requests {r['extra_requests']}, duplicates "
                f"{r['duplicates']} (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
            )
        ratio = results[2]["rate"] / results[1]["rate"]
        print(
            f"two workers / one worker: {ratio:.2f}x (target >= 1.8x: "
            + ("met)" if ratio >= 1.8 else "NOT met)")
        )
        # exactly-once is the hard requirement here; the speed-up is reported
        return int(any(r["extra_requests"] or r["duplicates"] for r in results.values()))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
