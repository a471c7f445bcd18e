"""Runs under injected faults, for README's "Reliability and
security" table: a judge run through real Celery worker processes, PostgreSQL and Redis against
the local OpenAI-compatible test server, with

- a cancel at ~40 %: how fast it stops, what is kept, whether cancelled items count as errors;
- a chunk redelivered while it runs (the broker's visibility timeout made shorter than the
  chunk, two workers): extra LLM requests, duplicate rows, counters against rows;
- a worker SIGKILLed mid-chunk, then another worker: lost and duplicated judgments, replies
  bought twice against the bound on what a kill may re-buy (the concurrency and half of it).

Each returns the row for :func:`tests.perf.reliability_probe.record` (``bad``: wrong outcomes).
Called by ``test_run_faults`` in ``reliability_probe.py`` (a PostgreSQL test database with
``transaction=True``).
"""

from __future__ import annotations

import time
from pathlib import Path

from django.db import transaction

from core.runs.reply_writer import unstored_width
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import judges as judge_services
from judging.services import runs as services
from tests.judging.factories import make_data
from tests.judging.support import judge_responder
from tests.support.llm_server import LLMTestServer
from tests.support.worker import running_worker, start_worker, wait_for

CONCURRENCY = 8


def _judge(server: LLMTestServer, name: str):
    return judge_services.judge_create(
        name=name,
        backend="openai",
        base_url=server.base_url,
        model="m",
        concurrency=CONCURRENCY,
        timeout_s=10,
        max_retries=2,
    )


def _launch(judge, dataset) -> JudgeRun:
    with transaction.atomic():
        return services.judge_run_create(judge=judge, selection={"dataset": dataset.pk})


def _duplicates(run: JudgeRun) -> int:
    """Items pointing at a judgment another item of the run has, plus judgments made twice
    for one content (the unique index makes both 0 unless something is wrong)."""
    items = JudgeRunItem.objects.filter(run=run, judgment__isnull=False)
    return items.count() - items.values("judgment").distinct().count()


def cancel_at_40(tmp: Path, n: int = 1000) -> dict:
    with LLMTestServer(responder=judge_responder, latency_s=0.05) as server:
        data = make_data(n=n, bad_every=7, dataset="cancel", generators=("cancel-gen",))
        judge = _judge(server, "faults-cancel")
        with running_worker(tmp, concurrency=1):
            run = _launch(judge, data["dataset"])
            wait_for(
                lambda: Judgment.objects.filter(judge=judge).count() >= 0.4 * n,
                timeout=120,
                message="40%",
            )
            t0 = time.monotonic()
            services.judge_run_cancel(run=JudgeRun.objects.get(pk=run.pk))
            wait_for(
                lambda: JudgeRun.objects.get(pk=run.pk).status == "cancelled",
                timeout=60,
                message="cancelled",
            )
            stopped_s = time.monotonic() - t0
        run.refresh_from_db()
        stored = Judgment.objects.filter(judge=judge).count()
        answered = sum(1 for r in server.requests if r.fault is None)
        thrown_away = answered - stored
        wrong = (
            int(run.n_failed != 0)
            + int(run.n_done != stored)
            + max(0, thrown_away)
            + _duplicates(run)
        )
        return {
            "area": "Runs under faults",
            "tried": f"cancel a {n}-item judge run at 40% (concurrency {CONCURRENCY}, "
            "50 ms replies, one worker)",
            "result": f"stopped in {stopped_s:.2f} s; kept {stored} judgments, run says "
            f"{run.n_done} done, {run.n_failed} errors, {run.n_total - run.n_done} not judged; "
            f"replies paid and thrown away: {thrown_away}; duplicated: {_duplicates(run)}",
            "bad": wrong,
        }


def redelivered_chunk(tmp: Path, n: int = 240) -> dict:
    env = {
        "CELERY_VISIBILITY_TIMEOUT": "2",
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "RUN_LEASE_SECONDS": "20",
        "H2R_JUDGE_CHUNK_ITEMS": "100000",
    }
    with LLMTestServer(responder=judge_responder, latency_s=0.2) as server:
        data = make_data(n=n, bad_every=7, dataset="redeliver", generators=("redeliver-gen",))
        judge = _judge(server, "faults-redeliver")
        (tmp / "a").mkdir(exist_ok=True)
        (tmp / "b").mkdir(exist_ok=True)
        first = start_worker(tmp / "a", concurrency=1, extra_env=env)
        try:
            with running_worker(tmp / "b", concurrency=1, extra_env=env, queue=first.queue) as w:
                run = _launch(judge, data["dataset"])
                wait_for(
                    lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
                    timeout=180,
                    message="run to finish",
                )
                logs = first.log() + w.log()
        finally:
            first.stop()
        run.refresh_from_db()
        deliveries = logs.count("] received")
        busy = logs.count("'busy'")
        extra = len(server.requests) - n
        stored = Judgment.objects.filter(judge=judge).count()
        wrong = max(0, extra) + _duplicates(run) + abs(run.n_done - n) + abs(stored - n)
        return {
            "area": "Runs under faults",
            "tried": f"a {n}-item chunk redelivered while it runs (visibility timeout 2 s < "
            f"chunk ~{n * 0.2 / CONCURRENCY:.0f} s, two workers)",
            "result": f"{deliveries} deliveries of chunk messages, {busy} copies found the lease "
            f"held and called no model; LLM requests {len(server.requests)} for {n} items "
            f"(extra {extra}); duplicated {_duplicates(run)}; n_done {run.n_done} for {n}",
            "bad": wrong,
        }


def kill_mid_chunk(tmp: Path, n: int = 600) -> dict:
    env = {"RUN_LEASE_SECONDS": "2", "H2R_JUDGE_CHUNK_ITEMS": "400"}
    with LLMTestServer(responder=judge_responder, latency_s=0.04) as server:
        data = make_data(n=n, bad_every=7, dataset="kill", generators=("kill-gen",))
        judge = _judge(server, "faults-kill")
        first = start_worker(tmp, concurrency=1, extra_env=env)
        try:
            run = _launch(judge, data["dataset"])
            wait_for(
                lambda: (
                    Judgment.objects.filter(judge=judge).count() >= 150
                    and JudgeRun.objects.filter(pk=run.pk).exclude(lease_owner="").exists()
                ),
                timeout=120,
                message="inside a chunk",
            )
        finally:
            first.kill()
        at_kill = Judgment.objects.filter(judge=judge).count()
        with running_worker(tmp, concurrency=1, extra_env=env, queue=first.queue):
            wait_for(
                lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
                timeout=180,
                message="run to finish after the kill",
            )
        run.refresh_from_db()
        asked = [r.last_message for r in server.requests]
        lost = n - Judgment.objects.filter(judge=judge).count()
        rebought = len(asked) - len(set(asked))
        bound = unstored_width(CONCURRENCY)  # in flight and replies not yet committed
        wrong = lost + _duplicates(run) + max(0, rebought - bound)
        return {
            "area": "Runs under faults",
            "tried": f"kill -9 the worker mid-chunk ({at_kill} of {n} judged, concurrency "
            f"{CONCURRENCY}), then start another",
            "result": f"lost {lost}, duplicated {_duplicates(run)}; replies bought twice "
            f"{rebought} (bound: the concurrency and half of it, {bound}); run done, n_done "
            f"{run.n_done}",
            "bad": wrong,
        }
