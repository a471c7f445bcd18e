"""Runs worked in lanes (core.runs.lanes) on real judge runs against the local OpenAI-compatible
server: each lane judges its own items (duplicates of one content stay in one lane), a lane held
by a live execution is left alone, the last lane ends the run, a failing lane ends it at once,
a cancel stops every lane, orphaned lanes are requeued; and two real worker processes on one
run judge every item exactly once, redelivered lane messages included."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from core.runs import engine, lanes
from core.runs.models import RunLane
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import judges as judge_services
from judging.services import runs as services
from judging.services.execution import lane_items
from tests.judging.support import judge_responder, make_data
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = json.dumps({"reasoning": "ok", "critical_failures": []})
LABEL = JudgeRun._meta.label


def make_judge(base_url, **kw):
    fields = {"backend": "openai", "base_url": base_url, "model": "m", "concurrency": 4}
    fields.update(kw)
    return judge_services.judge_create(name="lanes-judge", timeout_s=5, max_retries=1, **fields)


@pytest.fixture
def four_lanes(settings, monkeypatch):
    settings.JUDGE_RUN_LANES = 4
    sent: list[tuple[int, int | None]] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue",
        lambda run, countdown=None, lane=None: sent.append((run.pk, lane)),
    )
    return sent


def lane_of(content_hash: str, n: int = 4) -> int:
    return int(content_hash[0], 16) % n


def test_each_lane_judges_its_own_items_and_the_last_lane_ends_the_run(llm_server, four_lanes):
    llm_server.responder = judge_responder
    data = make_data(n=40, generators=("gen-a", "gen-b"))
    # gen-b's steps copy gen-a's: 40 duplicate contents, asked once each (same lane)
    for a, b in zip(data["generations"][:40], data["generations"][40:], strict=True):
        b.predicted_steps = a.predicted_steps
        b.save(update_fields=["predicted_steps"])
    run = services.judge_run_create(
        judge=make_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )
    assert four_lanes == [(run.pk, k) for k in range(4)]  # one chunk task per lane
    rows = RunLane.objects.filter(run_label=LABEL, run_id=run.pk).order_by("lane")
    assert [(r.lane, r.n_lanes, r.done) for r in rows] == [(k, 4, False) for k in range(4)]
    outcomes = []
    for k in range(4):
        before = len(llm_server.requests)
        outcomes.append(engine.execute(LABEL, run.pk, lane=k, chain=False).status)
        # the first lane's execution inserted the run's items (judge_run_prepare)
        hashes = set(JudgeRunItem.objects.filter(run=run).values_list("content_hash", flat=True))
        assert len(hashes) == 40
        # lane k asked each of its contents once, and nothing of the lanes after it
        assert len(llm_server.requests) - before == sum(1 for h in hashes if lane_of(h) == k)
        judged = JudgeRunItem.objects.filter(run=run, judgment__isnull=False)
        assert {lane_of(h) for h in judged.values_list("content_hash", flat=True)} <= set(
            range(k + 1)
        )
    assert outcomes == ["lane-done", "lane-done", "lane-done", "done"]
    run.refresh_from_db()
    assert (run.status, run.n_total, run.n_done, run.n_failed) == ("done", 80, 80, 0)
    assert len(llm_server.requests) == 40 == Judgment.objects.count()  # each content once
    assert not RunLane.objects.filter(run_label=LABEL, run_id=run.pk, done=False).exists()
    # an execution of a done lane, or of a lane of a finished run, has nothing to do
    assert engine.execute(LABEL, run.pk, lane=2, chain=False).status == "inactive"


def test_lane_filter_splits_by_the_first_hex_digit():
    lease = engine.Lease(JudgeRun, 1, "t", lane=1, n_lanes=3)
    q = str(lane_items(lease))
    for digit in "147ad":  # 1, 4, 7, 10, 13 mod 3 == 1
        assert f"'{digit}'" in q
    assert "'0'" not in q and "'2'" not in q
    assert str(lane_items(engine.Lease(JudgeRun, 1, "t"))) == "(AND: )"


def test_a_held_lane_is_left_alone_and_a_stale_one_taken_over(llm_server, four_lanes, settings):
    settings.RUN_LEASE_SECONDS = 30
    llm_server.responder = lambda req: GOOD
    data = make_data(n=12)
    run = services.judge_run_create(
        judge=make_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )
    assert lanes.acquire(JudgeRun, run.pk, 0, "first") == 4
    busy = engine.execute(LABEL, run.pk, lane=0, chain=False)
    assert busy.status == "busy" and 29 < busy.retry_in_s <= 31
    assert len(llm_server.requests) == 0  # the second execution called no model
    # a stray whole-run chunk message (no lane) does nothing while the lanes work the run
    assert engine.execute(LABEL, run.pk, chain=False).status == "inactive"
    assert len(llm_server.requests) == 0
    # another lane is free meanwhile, and the run shows alive and running
    assert engine.execute(LABEL, run.pk, lane=1, chain=False).status == "lane-done"
    run.refresh_from_db()
    assert run.status == "running" and run.lease_is_fresh()
    # the first execution's worker died: its lane goes stale and is taken over
    RunLane.objects.filter(run_label=LABEL, run_id=run.pk, lane=0).update(
        heartbeat_at=timezone.now() - timedelta(seconds=31)
    )
    assert engine.execute(LABEL, run.pk, lane=0, chain=False).status == "lane-done"
    assert not lanes.renew(JudgeRun, run.pk, 0, "first")  # the dead execution lost it
    for k in (2, 3):
        engine.execute(LABEL, run.pk, lane=k, chain=False)
    run.refresh_from_db()
    assert (run.status, run.n_done) == ("done", 12)
    assert len(llm_server.requests) == 12


def test_a_failing_lane_fails_the_run_and_the_others_stop(llm_server, four_lanes, monkeypatch):
    llm_server.responder = lambda req: GOOD
    data = make_data(n=16)
    run = services.judge_run_create(
        judge=make_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )
    assert lanes.acquire(JudgeRun, run.pk, 3, "other") == 4  # lane 3 is being worked

    def broken(self, run, lease):
        raise RuntimeError("disk full")

    monkeypatch.setattr("judging.services.execution.JudgeRunExecutor.work_chunk", broken)
    assert engine.execute(LABEL, run.pk, lane=0, chain=False).status == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "RuntimeError: disk full" in run.error
    # the execution on lane 3 learns it at its next beat, and stops
    lease = engine.Lease(JudgeRun, run.pk, "other", lane=3, n_lanes=4)
    assert lease.beat() is engine.LeaseState.LOST
    assert engine.execute(LABEL, run.pk, lane=1, chain=False).status == "inactive"


def test_cancel_stops_every_lane_and_the_last_ends_the_run(llm_server, four_lanes):
    llm_server.responder = lambda req: GOOD
    data = make_data(n=16)
    run = services.judge_run_create(
        judge=make_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )
    assert engine.execute(LABEL, run.pk, lane=0, chain=False).status == "lane-done"
    assert lanes.acquire(JudgeRun, run.pk, 1, "working") == 4
    run = services.judge_run_cancel(run=run)
    assert run.status == "cancelling"  # a lane is alive: asked to stop
    lease = engine.Lease(JudgeRun, run.pk, "working", lane=1, n_lanes=4)
    assert lease.beat() is engine.LeaseState.CANCELLING
    ended = [engine.execute(LABEL, run.pk, lane=k, chain=False).status for k in (2, 3)]
    assert ended == ["lane-done", "lane-done"]
    run.refresh_from_db()
    assert run.status == "cancelling"  # lane 1 still stores what it has in flight
    assert (
        lanes.finish(
            JudgeRun,
            run.pk,
            1,
            "working",
            status="cancelled",
            error="",
            outcome=lambda r: ("done", ""),
            counters=lambda r: {},
        )
        == "cancelled"
    )
    run.refresh_from_db()
    assert run.status == "cancelled" and run.finished_at is not None


def test_orphaned_lanes_are_requeued_and_resume_makes_fresh_lanes(llm_server, four_lanes, settings):
    settings.RUN_LEASE_SECONDS = 30
    data = make_data(n=8)
    run = services.judge_run_create(
        judge=make_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )
    four_lanes.clear()
    old = timezone.now() - timedelta(seconds=40)
    lanes.acquire(JudgeRun, run.pk, 0, "dead")
    lanes.acquire(JudgeRun, run.pk, 1, "alive")
    RunLane.objects.filter(run_label=LABEL, run_id=run.pk, lane=0).update(heartbeat_at=old)
    RunLane.objects.filter(run_label=LABEL, run_id=run.pk, lane=3).update(done=True)
    resumed = engine.resume_orphans()
    # lane 0 (stale) now; lane 1 (alive) looked at again when it would go stale; lane 2 never
    # started while the run is alive: left to the broker; lane 3 done
    assert f"{LABEL}:{run.pk}:lane0" in resumed
    assert sorted(lane for pk, lane in four_lanes if pk == run.pk) == [0, 1]
    # the worker of every lane is gone: resume makes the lanes afresh and sends each
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=old)
    RunLane.objects.filter(run_label=LABEL, run_id=run.pk).update(heartbeat_at=old)
    four_lanes.clear()
    with transaction.atomic():
        engine.resume(run)
    assert four_lanes == [(run.pk, k) for k in range(4)]
    assert (
        not RunLane.objects.filter(run_label=LABEL, run_id=run.pk)
        .exclude(lease_owner="", done=False)
        .exists()
    )


@pytest.mark.worker
def test_two_real_workers_judge_one_run_exactly_once(llm_server, tmp_path, settings):
    settings.JUDGE_RUN_LANES = 4
    llm_server.responder = lambda req: GOOD
    llm_server.latency_s = 0.02
    n = 160
    data = make_data(n=n)
    judge = make_judge(llm_server.base_url)
    env = {"H2R_JUDGE_CHUNK_ITEMS": "15"}  # many chunks per lane, handed over between workers
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with running_worker(tmp_path / "a", concurrency=1, extra_env=env) as first:
        second = start_worker(tmp_path / "b", concurrency=1, extra_env=env, queue=first.queue)
        try:
            with transaction.atomic():
                run = services.judge_run_create(
                    judge=judge, selection={"dataset": data["dataset"].pk}
                )
                for _ in range(2):  # every lane's message delivered twice more
                    for k in range(4):
                        transaction.on_commit(lambda k=k: engine.enqueue(run, lane=k))
            wait_for(
                lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
                timeout=120,
                message="the run done",
            )
        finally:
            second.stop()
    run.refresh_from_db()
    assert (run.n_done, run.n_failed, run.n_total) == (n, 0, n)
    assert Judgment.objects.filter(judge=judge).count() == n
    assert len(llm_server.requests) == n  # no item asked twice, whatever the redeliveries
    assert RunLane.objects.filter(run_label=LABEL, run_id=run.pk, done=True).count() == 4


def test_a_resume_worked_in_this_process_drops_the_lanes(llm_server, four_lanes):
    llm_server.responder = lambda req: GOOD
    data = make_data(n=10)
    run = services.judge_run_create(
        judge=make_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )
    engine.cancel(run)  # queued: cancelled at once, lanes untouched
    run = engine.resume(run, enqueue=False)
    assert not RunLane.objects.filter(run_label=LABEL, run_id=run.pk).exists()
    run = engine.execute_inline(run)
    assert (run.status, run.n_done) == ("done", 10) and len(llm_server.requests) == 10


def test_lanes_from_the_setting_and_one_on_sqlite(settings, monkeypatch):
    from django.db import connection

    from judging.services.execution import JudgeRunExecutor

    run = JudgeRun(pk=1)
    settings.JUDGE_RUN_LANES = 40
    assert JudgeRunExecutor().lanes(run) == 16  # one hex digit splits at most 16 ways
    settings.JUDGE_RUN_LANES = 3
    assert JudgeRunExecutor().lanes(run) == 3
    monkeypatch.setattr(connection, "vendor", "sqlite")
    assert JudgeRunExecutor().lanes(run) == 1  # the embedded default: one machine
