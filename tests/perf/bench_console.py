"""Console benchmark: no heavy work in a request, at 70,000 items.

Data (bulk-created on a scratch PostgreSQL database ``bench_h2r_console``): 7,000 procedures ×
10 generators = 70,000 generations (one dataset); a done judge run judging all 70,000 (70,000
judgments; token counts stored on half the generators, counted on the fly for the rest); a
second judge with a running 70,000-item run half done; a running 70,000-document mining batch.

Timed with the Django test client (in process, real PostgreSQL, a logged-in admin), ``--n``
requests each after 3 warm-ups, p50/p95/max: the judge-run launch (POST, confirm) and the
estimate request (POST) on the 70,000-generation selection, the estimate poll, the run's live
progress poll and its console page, the judge leaderboard page (stored) and its API, the mining
batch page (its yields cached, and not) and its progress poll; plus the queries a progress poll makes. The broker is Redis
(``CELERY_BROKER_URL``, default db 3, a queue nobody reads, purged at the end) and the judge's
server the local OpenAI-compatible test server (the launch's preflight asks it ``GET /models``).
For comparison, the work each request no longer does is timed where it now runs (a worker):
the run's item selection and hashing, the estimate, the leaderboard.

Target: every request < 200 ms p95. Run:
``.venv/bin/python tests/perf/bench_console.py [--n 40] [--generators 10] [--procedures 7000]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/3")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_console"
os.environ["CELERY_DEFAULT_QUEUE"] = f"bench-console-{uuid.uuid4().hex[:8]}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402 - the environment above must be set before Django loads

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

TARGET_MS = 200.0
WORDS = (  # noqa: SIM905 (a readable sentence, split once)
    "remove the cover carefully and place screws in a small bowl so none are lost while you work "
    "on the panel then loosen bolt tighten clockwise measure twice cut once mix flour water salt "
    "yeast knead dough for ten minutes until smooth preheat oven check temperature wipe surface"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n)).capitalize() + "."


def make_data(*, n_procedures: int, n_generators: int, base_url: str) -> dict:
    from django.utils import timezone

    from benchmarks.models import Dataset, Generation, Generator, Procedure
    from judging import prompting
    from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
    from mining.models import MiningBatch, MiningDocument

    rng = random.Random(13)
    ds = Dataset.objects.create(name="console", version="v1")
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"doc-{i:06d}",
                goal=sentence(rng, 12),
                steps=[sentence(rng, rng.randint(12, 20)) for _ in range(rng.randint(8, 12))],
            )
            for i in range(n_procedures)
        ],
        batch_size=2000,
    )
    gens: list = []
    for g in range(n_generators):
        gen = Generator.objects.create(name=f"gen-{g}")
        rows = []
        for p in procs:
            steps = [sentence(rng, rng.randint(10, 20)) for _ in p.steps]
            scores = {"gen_tokens": 200, "ref_tokens": 210} if g % 2 == 0 else {}
            rows.append(
                Generation(
                    procedure=p,
                    generator=gen,
                    predicted_steps=steps,
                    scores=scores,
                    token_count=200 if g % 2 == 0 else None,
                )
            )
        gens += Generation.objects.bulk_create(rows, batch_size=5000)
    by_proc = {p.pk: p for p in procs}
    now = timezone.now()
    judges = []
    for name in ("judge-done", "judge-live"):
        judge = Judge(name=name, model="m", base_url=base_url, backend="openai")
        judge.save()
        judges.append(judge)
    done_run = JudgeRun.objects.create(
        judge=judges[0],
        status=JudgeRun.Status.DONE,
        n_total=len(gens),
        n_done=len(gens),
        started_at=now,
        finished_at=now,
        prepared_at=now,
        cost="3.5",
        selection={"dataset": ds.pk},
    )
    judgments, items = [], []
    for g in gens:
        p = by_proc[g.procedure_id]
        h = prompting.content_hash(goal=p.goal, reference_steps=p.steps, steps=g.predicted_steps)
        fail = rng.random() < 0.4
        judgments.append(
            Judgment(
                judge=judges[0],
                judge_key=judges[0].judge_id,
                content_hash=h,
                source_example_id=p.source_example_id,
                reasoning="omits a step" if fail else "fine",
                has_failure=fail,
                n_failures=int(fail),
                critical_failures=[{"failure": "x", "L1_steps": [1], "L2_steps": [1]}]
                if fail
                else [],
            )
        )
        items.append((g.pk, h))
    stored = Judgment.objects.bulk_create(judgments, batch_size=5000)
    JudgeRunItem.objects.bulk_create(
        [
            JudgeRunItem(run=done_run, generation_id=gid, content_hash=h, judgment=s)
            for (gid, h), s in zip(items, stored, strict=True)
        ],
        batch_size=5000,
    )
    live_run = JudgeRun.objects.create(
        judge=judges[1],
        status=JudgeRun.Status.RUNNING,
        n_total=len(gens),
        n_done=len(gens) // 2,
        started_at=now,
        prepared_at=now,
        heartbeat_at=now,
        lease_owner="bench",
        selection={"dataset": ds.pk},
    )
    JudgeRunItem.objects.bulk_create(
        [JudgeRunItem(run=live_run, generation_id=gid, content_hash=h) for gid, h in items],
        batch_size=5000,
    )
    batch = MiningBatch.objects.create(
        name="console batch",
        source_format="jsonl",
        stages=[1, 2, 3, 4, 5, 6],
        status="running",
        n_total=len(gens),
        n_done=len(gens) // 3,
        ingested=True,
        started_at=now,
        heartbeat_at=now,
    )
    topics = ["health", "food-dining", "home-garden", "transportation", ""]
    MiningDocument.objects.bulk_create(
        [
            MiningDocument(
                batch=batch,
                position=i + 1,
                source_id=f"d{i}",
                topic=topics[i % len(topics)],
                text=sentence(rng, 40),
                outcome="kept" if i % 3 == 0 else "pending",
                last_passed_stage=6 if i % 3 == 0 else 0,
                stage_reached="final_validation" if i % 3 == 0 else "",
            )
            for i in range(len(gens))
        ],
        batch_size=5000,
    )
    return {"dataset": ds, "judges": judges, "done": done_run, "live": live_run, "batch": batch}


def timed_requests(fn, n: int) -> dict:
    for _ in range(3):
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        response = fn()
        times.append((time.perf_counter() - t) * 1000)
        assert response.status_code < 400, (response.status_code, response.content[:500])
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
    return {"p50": statistics.median(times), "p95": p95, "max": times[-1]}


def timed_once(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--procedures", type=int, default=7000)
    parser.add_argument("--generators", type=int, default=10)
    args = parser.parse_args()

    from tests.support.llm_server import LLMTestServer

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    server = LLMTestServer().start()
    try:
        return run(args, server)
    finally:
        server.stop()
        from config.celery import app

        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(os.environ["CELERY_DEFAULT_QUEUE"])
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args, server) -> int:
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from django.test import Client
    from django.urls import reverse

    from core.roles import ensure_roles, role_assign
    from judging.leaderboard import reads as sel
    from judging.models import JudgeRun, JudgeRunEstimate, LeaderboardReport
    from judging.services import estimates
    from judging.services import runs as run_services
    from judging.services.leaderboard import leaderboard_compute, leaderboard_get

    t0 = time.perf_counter()
    data = make_data(
        n_procedures=args.procedures, n_generators=args.generators, base_url=server.base_url
    )
    n_items = args.procedures * args.generators
    print(
        f"data: {n_items} generations, a done {n_items}-item judge run ({n_items} judgments), a "
        f"running {n_items}-item run, a {n_items}-document mining batch in "
        f"{time.perf_counter() - t0:.1f}s"
    )
    ensure_roles()
    admin = User.objects.create_user("bench-admin", password="x")
    role_assign(user=admin, role="admin")
    client = Client()
    client.force_login(admin)
    ds, judges, live, batch = data["dataset"], data["judges"], data["live"], data["batch"]
    launch_url = reverse("admin:judging_judgerun_launch")
    form = {"judge": judges[1].pk, "dataset": ds.pk}
    est = estimates.judge_run_estimate_request(judge=judges[1], selection={"dataset": ds.pk})
    progress_url = reverse("admin:judging_judgerun_progress", args=[live.pk])
    mark = f"{live.status}:{live.n_done}:{live.n_failed}:1"

    # the work that left the request, timed where it now runs
    worker = {
        f"estimate (hash {n_items:,} items, sample tokens)": timed_once(
            lambda: estimates.judge_run_estimate_work(estimate_id=est.pk)
        ),
        f"run prepare (select, hash, insert {n_items:,} items)": timed_once(
            lambda: run_services.judge_run_prepare(
                run=JudgeRun.objects.create(
                    judge=judges[1], selection={"dataset": ds.pk}, n_total=n_items
                )
            )
        ),
        f"leaderboard ({n_items:,} judgments)": timed_once(
            lambda: sel.judge_leaderboard(judges=None, study=None)
        ),
    }
    # store the leaderboard as a worker would (a large one is never computed in a request)
    if leaderboard_get(judges=None, study=None)["pending"]:
        leaderboard_compute(report_id=LeaderboardReport.objects.get().pk)
    assert leaderboard_get(judges=None, study=None)["fresh"]

    def uncached(url):
        cache.clear()  # the yields' cache (sessions are in the database)
        return client.get(url)

    cases = [  # the leaderboard first: launching runs changes what it reads
        ("leaderboard page (stored)", lambda: client.get("/judging/compare/leaderboard/?study=")),
        ("API: leaderboard (stored)", lambda: client.get("/api/compare/leaderboard/")),
        (
            f"launch a run (POST, {n_items:,} items)",
            lambda: client.post(launch_url, {**form, "confirm": "1", "estimate": est.pk}),
        ),
        ("ask an estimate (POST)", lambda: client.post(launch_url, form)),
        (
            "estimate poll",
            lambda: client.get(reverse("admin:judging_judgerun_estimate", args=[est.pk])),
        ),
        (
            "API: ask an estimate (POST, 202)",
            lambda: client.post(
                "/api/judge-runs/estimate/",
                {"judge": judges[1].name, "selection": {"dataset": ds.pk}},
                content_type="application/json",
            ),
        ),
        (
            "run progress poll (htmx)",
            lambda: client.get(progress_url, {"wait": "2", "seen": mark}),
        ),
        (
            "run console page",
            lambda: client.get(reverse("admin:judging_judgerun_change", args=[live.pk])),
        ),
        ("API: run detail", lambda: client.get(f"/api/judge-runs/{live.pk}/")),
        (
            "mining batch progress poll (htmx)",
            lambda: client.get(reverse("mining:batch_progress", args=[batch.pk])),
        ),
        ("mining batch page", lambda: client.get(batch.get_absolute_url())),
        ("mining batch page, yields not cached", lambda: uncached(batch.get_absolute_url())),
    ]
    ok = True
    print(f"\n{'request':<40} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, fn in cases:
        r = timed_requests(fn, args.n)
        passed = r["p95"] < TARGET_MS
        ok &= passed
        print(
            f"{name:<40} {r['p50']:8.1f} {r['p95']:8.1f} {r['max']:8.1f}  "
            f"{'PASS' if passed else 'FAIL'} (p95 < {TARGET_MS:.0f} ms)"
        )
    for name, url, params in (
        ("run progress poll", progress_url, {"wait": "2", "seen": mark}),
        ("mining batch progress poll", reverse("mining:batch_progress", args=[batch.pk]), {}),
    ):
        with CaptureQueriesContext(connection) as ctx:
            client.get(url, params)
        sql = [q["sql"] for q in ctx.captured_queries]
        on_run = sum(
            ('"judging_judgerun"' in q or '"mining_miningbatch"' in q)
            and "judgerunitem" not in q
            and "miningdocument" not in q
            for q in sql
        )
        print(f"{name}: {len(sql)} queries, {on_run} on the run's row, the rest session/auth")
    print("\nmoved to a worker (one run each):")
    for name, seconds in worker.items():
        print(f"  {name:<52} {seconds:6.2f} s")
    print(
        f"\nruns launched: {JudgeRun.objects.count()}, estimates: {JudgeRunEstimate.objects.count()}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
