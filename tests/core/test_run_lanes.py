"""Runs worked in lanes (core.runs.lanes) on the test-only run type (tests/runapp): one lease
per lane, a held lane left alone and a stale one taken over, a failing lane failing the run,
a cancel stopping every lane, orphaned lanes requeued and a resume making the lanes afresh."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.runs import engine, lanes
from core.runs.models import RunLane
from tests.core.factories import make_engine_run
from tests.runapp.models import EngineRun

pytestmark = pytest.mark.django_db

LABEL = EngineRun._meta.label


@pytest.fixture
def four_lanes(engine_script, enqueued, django_capture_on_commit_callbacks):
    """A launched run of ``n`` items in four lanes (the lanes' chunk tasks recorded, not sent)."""
    engine_script["lanes"] = 4

    def launch(n: int) -> EngineRun:
        run = make_engine_run(items=n, n_lanes=4)
        with django_capture_on_commit_callbacks(execute=True):
            engine.launch(run)
        assert enqueued == [(run.pk, None, k) for k in range(4)]  # one chunk task per lane
        enqueued.clear()
        return run

    return launch


def execute(run, **kw) -> engine.ChunkOutcome:
    return engine.execute(LABEL, run.pk, chain=False, **kw)


def lanes_of(run):
    return RunLane.objects.filter(run_label=LABEL, run_id=run.pk)


def test_each_lane_works_its_own_items_and_the_last_lane_ends_the_run(four_lanes, engine_script):
    run = four_lanes(12)
    assert [(r.lane, r.n_lanes, r.done) for r in lanes_of(run).order_by("lane")] == [
        (k, 4, False) for k in range(4)
    ]
    outcomes = [execute(run, lane=k).status for k in range(4)]
    assert outcomes == ["lane-done", "lane-done", "lane-done", "done"]
    assert sorted(engine_script["items"]) == sorted((k, k % 4) for k in range(12))
    run.refresh_from_db()
    assert (run.status, run.n_total, run.n_done, run.n_failed) == ("done", 12, 12, 0)
    assert not lanes_of(run).filter(done=False).exists()
    # an execution of a done lane, or of a lane of a finished run, has nothing to do
    assert execute(run, lane=2).status == "inactive"


def test_a_held_lane_is_left_alone_and_a_stale_one_taken_over(four_lanes, engine_script):
    run = four_lanes(12)
    assert lanes.acquire(EngineRun, run.pk, 0, "first") == 4
    busy = execute(run, lane=0)
    assert busy.status == "busy" and 29 < busy.retry_in_s <= 31
    assert engine_script["items"] == []  # the second execution worked nothing
    # a stray whole-run chunk message (no lane) does nothing while the lanes work the run
    assert execute(run).status == "inactive"
    assert engine_script["items"] == []
    # another lane is free meanwhile, and the run shows alive and running
    assert execute(run, lane=1).status == "lane-done"
    run.refresh_from_db()
    assert run.status == "running" and run.lease_is_fresh()
    # the first execution's worker died: its lane goes stale and is taken over
    lanes_of(run).filter(lane=0).update(heartbeat_at=timezone.now() - timedelta(seconds=31))
    assert execute(run, lane=0).status == "lane-done"
    assert not lanes.renew(EngineRun, run.pk, [0], "first")  # the dead execution lost it
    for k in (2, 3):
        execute(run, lane=k)
    run.refresh_from_db()
    assert (run.status, run.n_done) == ("done", 12)
    assert len(engine_script["items"]) == 12  # each item worked once


def test_a_failing_lane_fails_the_run_and_the_others_stop(four_lanes, engine_script):
    run = four_lanes(16)
    assert lanes.acquire(EngineRun, run.pk, 3, "other") == 4  # lane 3 is being worked
    engine_script["raise"] = RuntimeError("disk full")
    assert execute(run, lane=0).status == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "RuntimeError: disk full" in run.error
    # the execution on lane 3 learns it at its next beat, and stops
    lease = engine.Lease(EngineRun, run.pk, "other", lane=3, n_lanes=4)
    assert lease.beat() is engine.LeaseState.LOST
    assert execute(run, lane=1).status == "inactive"


def test_cancel_stops_every_lane_and_the_last_ends_the_run(four_lanes):
    run = four_lanes(16)
    assert execute(run, lane=0).status == "lane-done"
    assert lanes.acquire(EngineRun, run.pk, 1, "working") == 4
    run = engine.cancel(run)
    assert run.status == "cancelling"  # a lane is alive: asked to stop
    lease = engine.Lease(EngineRun, run.pk, "working", lane=1, n_lanes=4)
    assert lease.beat() is engine.LeaseState.CANCELLING
    assert [execute(run, lane=k).status for k in (2, 3)] == ["lane-done", "lane-done"]
    run.refresh_from_db()
    assert run.status == "cancelling"  # lane 1 still stores what it has in flight
    assert (
        lanes.finish(
            EngineRun,
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


def test_orphaned_lanes_are_requeued_and_resume_makes_fresh_lanes(
    four_lanes, enqueued, django_capture_on_commit_callbacks
):
    run = four_lanes(8)
    old = timezone.now() - timedelta(seconds=40)
    lanes.acquire(EngineRun, run.pk, 0, "dead")
    lanes.acquire(EngineRun, run.pk, 1, "alive")
    lanes_of(run).filter(lane=0).update(heartbeat_at=old)
    lanes_of(run).filter(lane=3).update(done=True)
    resumed = engine.resume_orphans()
    # lane 0 (stale) now; lane 1 (alive) looked at again when it would go stale; lane 2 never
    # started while the run is alive: left to the broker; lane 3 done
    assert f"{LABEL}:{run.pk}:lane0" in resumed
    assert sorted(call[2] for call in enqueued if call[0] == run.pk) == [0, 1]
    # the worker of every lane is gone: resume makes the lanes afresh and sends each
    EngineRun.objects.filter(pk=run.pk).update(heartbeat_at=old)
    lanes_of(run).update(heartbeat_at=old)
    enqueued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        engine.resume(run)
    assert enqueued == [(run.pk, None, k) for k in range(4)]
    assert not lanes_of(run).exclude(lease_owner="", done=False).exists()


def test_a_resume_worked_in_this_process_drops_the_lanes(four_lanes, engine_script):
    run = four_lanes(10)
    engine.cancel(run)  # queued: cancelled at once, lanes untouched
    run = engine.resume(run, enqueue=False)
    assert not lanes_of(run).exists()
    run = engine.execute_inline(run)
    assert (run.status, run.n_done) == ("done", 10) and len(engine_script["items"]) == 10
