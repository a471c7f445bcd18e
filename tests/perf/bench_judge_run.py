"""Judge-run benchmark: a 7,000-judgment run end to end through a real Celery worker,
PostgreSQL and Redis, against the local OpenAI-compatible test server answering every
request after 200 ms, with the judge's concurrency at 64. Ideal: 64 / 0.2 s = 320 judgments/s;
target >= 80 % of it (>= 256/s). Then the app's own work per judgment (prompt build, parse,
store), measured separately without the network: target < 2 ms.

Run: ``.venv/bin/python tests/perf/bench_judge_run.py [--n 7000] [--latency 0.2] [--concurrency 64]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review; a scratch
database ``bench_h2r_judges`` is created and dropped) and ``CELERY_BROKER_URL`` (default
redis://127.0.0.1:6379/0).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_h2r_judges")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

_TEXT = (
    "remove the cover carefully and place screws in a small bowl so none are lost while you "
    "work on the panel then loosen bolt tighten clockwise measure twice cut once mix flour "
    "water salt yeast knead dough for ten minutes until smooth preheat oven check temperature "
    "wipe surface apply thin layer"
)
WORDS = _TEXT.split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n)).capitalize() + "."


def make_data(n: int) -> None:
    from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic

    rng = random.Random(5)
    topics = list(Topic.objects.all())
    ds = Dataset.objects.create(name="bench")
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"doc-{i:06d}",
                topic=topics[i % len(topics)],
                goal=sentence(rng, 12),
                resources=[sentence(rng, 3) for _ in range(4)],
                steps=[sentence(rng, rng.randint(15, 25)) for _ in range(rng.randint(8, 12))],
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    gen = Generator.objects.create(name="bench-gen", model="m")
    Generation.objects.bulk_create(
        [
            Generation(
                procedure=p,
                generator=gen,
                token_count=200,
                predicted_steps=[
                    sentence(rng, rng.randint(15, 25)) + (" BAD" if i % 3 == 0 and k == 1 else "")
                    for k in range(len(p.steps))
                ],
            )
            for i, p in enumerate(procs)
        ],
        batch_size=2000,
    )


def end_to_end(n: int, latency: float, concurrency: int) -> dict:
    from judging.models import JudgeRun, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.judging.support import judge_responder
    from tests.support.llm_server import LLMTestServer
    from tests.support.worker import start_worker

    with (
        LLMTestServer(responder=judge_responder, latency_s=latency) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        judge = judge_services.judge_create(
            name="bench-judge",
            backend="openai",
            base_url=server.base_url,
            model="m",
            concurrency=concurrency,
            timeout_s=30,
        )
        worker = start_worker(Path(tmp), concurrency=1)
        try:
            import psutil

            root = psutil.Process(worker.proc.pid)
            procs = [root, *root.children(recursive=True)]
            cpu0 = sum(sum(p.cpu_times()[:2]) for p in procs)
            me = psutil.Process()
            me_cpu0 = sum(me.cpu_times()[:2])
            t0 = time.perf_counter()
            run = services.judge_run_create(judge=judge, selection={"generators": ["bench-gen"]})
            # judge_run_create enqueues on commit; outside a transaction that is now
            t_launched = time.perf_counter()
            while True:
                run.refresh_from_db()
                if not run.is_active:
                    break
                time.sleep(0.1)
            elapsed = time.perf_counter() - t0
            worker_cpu = sum(sum(p.cpu_times()[:2]) for p in procs) - cpu0
            server_cpu = sum(me.cpu_times()[:2]) - me_cpu0
            first_req = min(r.received_at for r in server.requests)
            last_req = max(r.received_at for r in server.requests)
        finally:
            worker.stop()
        assert run.status == JudgeRun.Status.DONE, (run.status, run.error)
        assert Judgment.objects.count() == n and run.n_done == n
        lat = sorted(Judgment.objects.values_list("latency_s", flat=True))
        return {
            "run_s": (run.finished_at - run.started_at).total_seconds(),
            "latency_mean_s": sum(lat) / len(lat),
            "latency_p95_s": lat[int(0.95 * (len(lat) - 1))],
            "elapsed_s": elapsed,
            "launch_s": t_launched - t0,
            "requests": len(server.requests),
            "rate": n / elapsed,
            "request_window_s": last_req - first_req,
            "worker_cpu_s": worker_cpu,
            "server_cpu_s": server_cpu,
        }


def own_work(n: int) -> dict:
    """Prompt build, parse and store per judgment, without network (bulk store per 256)."""
    from benchmarks.llm.base import LLMResponse
    from judging import prompting
    from judging.models import JudgeRunItem, Judgment
    from judging.services import execution, run_items, runs
    from judging.services import items as item_services
    from judging.services.judges import judge_create
    from tests.judging.support import judge_responder
    from tests.support.llm_server import RecordedRequest

    judge = judge_create(
        name="own-work-judge", backend="openai", base_url="http://127.0.0.1:9/v1", model="x"
    )
    run = runs.judge_run_create(judge=judge, selection={"generators": ["bench-gen"]}, enqueue=False)
    template = prompting.load_template(judge.prompt_template)
    items = list(JudgeRunItem.objects.filter(run=run).select_related("generation__procedure"))
    t0 = time.perf_counter()
    inputs = [
        item_services.item_input(
            item_id=i.id, content_hash=i.content_hash, generation=i.generation, template=template
        )
        for i in items
    ]
    requests = [item_services.judge_request(judge=judge, prompt=inp.prompt) for inp in inputs]
    t_build = time.perf_counter() - t0
    replies = [
        judge_responder(
            RecordedRequest("POST", "/v1/chat/completions", {}, {"messages": r.messages}, 0)
        )
        for r in requests
    ]
    from judging.parsing import parse_judge_output

    t0 = time.perf_counter()
    for inp, text in zip(inputs, replies, strict=True):
        parse_judge_output(text, n_l1=inp.n_l1, n_l2=inp.n_l2)
    t_parse = time.perf_counter() - t0
    results = [
        (inp, LLMResponse(text=text, prompt_tokens=3000, completion_tokens=100))
        for inp, text in zip(inputs, replies, strict=True)
    ]
    t0 = time.perf_counter()
    for start in range(0, len(results), execution.FLUSH_EVERY):
        run_items.judgments_store(
            run=run, judge=judge, results=results[start : start + execution.FLUSH_EVERY]
        )
    t_store = time.perf_counter() - t0  # includes parsing again (store parses each reply)
    assert Judgment.objects.filter(judge=judge).count() == len(items)
    per = lambda t: 1000 * t / len(items)  # noqa: E731
    return {
        "build_ms": per(t_build),
        "parse_ms": per(t_parse),
        "store_incl_parse_ms": per(t_store),
        "total_ms": per(t_build + t_store),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=7000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    from django.core.management import call_command  # noqa: F401

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        t0 = time.perf_counter()
        make_data(args.n)
        print(f"data: {args.n} procedures + generations in {time.perf_counter() - t0:.1f}s")
        ideal = args.concurrency / args.latency
        e2e = end_to_end(args.n, args.latency, args.concurrency)
        share = e2e["rate"] / ideal
        print(
            f"end to end: {args.n} judgments in {e2e['elapsed_s']:.2f}s (launch {e2e['launch_s']:.2f}s, "
            f"{e2e['requests']} requests) = {e2e['rate']:.1f} judgments/s; ideal {ideal:.0f}/s -> "
            f"{100 * share:.1f}% (target >= 80%) {'PASS' if share >= 0.8 else 'FAIL'}"
        )
        print(
            f"  requests sent over {e2e['request_window_s']:.2f}s; CPU: worker {e2e['worker_cpu_s']:.1f}s, "
            f"({1000 * e2e['worker_cpu_s'] / args.n:.2f} ms per judgment), "
            f"test server + poller {e2e['server_cpu_s']:.1f}s; machine load average {os.getloadavg()[0]:.2f} "
            f"on {os.cpu_count()} CPUs"
        )
        run_rate = args.n / e2e["run_s"]
        print(
            f"  the run itself (started_at -> finished_at, in the worker): {e2e['run_s']:.2f}s = "
            f"{run_rate:.1f} judgments/s = {100 * run_rate / ideal:.1f}% of ideal"
        )
        print(
            f"  request latency seen by the client: mean {1000 * e2e['latency_mean_s']:.0f} ms, "
            f"p95 {1000 * e2e['latency_p95_s']:.0f} ms (server waits {1000 * args.latency:.0f} ms)"
        )
        own = own_work(args.n)
        print(
            f"own work per judgment: prompt build {own['build_ms']:.3f} ms, parse {own['parse_ms']:.3f} ms, "
            f"store (bulk, incl. parse) {own['store_incl_parse_ms']:.3f} ms; total {own['total_ms']:.3f} ms "
            f"(target < 2 ms) {'PASS' if own['total_ms'] < 2 else 'FAIL'}"
        )
        return 0 if share >= 0.8 and own["total_ms"] < 2 else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
