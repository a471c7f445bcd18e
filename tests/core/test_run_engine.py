"""The run engine (core.runs.engine) on the test-only run type (tests/runapp: EngineRun and
its scripted executor): leases, busy and stale executions, cancel, resume, orphans, failures and
counters."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.runs import engine
from core.runs.engine import LeaseState, RunStateError
from tests.core.factories import ENGINE_LEASE_S as LEASE_S
from tests.core.factories import make_engine_run as make_run
from tests.runapp.models import EngineRun

pytestmark = pytest.mark.django_db

LABEL = EngineRun._meta.label


def execute(run, **kw) -> engine.ChunkOutcome:
    return engine.execute(LABEL, run.pk, chain=False, **kw)


def test_each_execution_takes_the_lease_with_a_fresh_token_and_counts(engine_script):
    engine_script["chunks"] = 2
    run = make_run()
    first = execute(run)
    run.refresh_from_db()
    assert first.status == "more"
    assert (run.status, run.lease_owner, run.started_at is not None) == ("running", "", True)
    assert (run.n_total, run.n_done, run.prompt_tokens) == (6, 3, 7)  # written from counters()
    started = run.started_at
    assert execute(run).status == "done"
    run.refresh_from_db()
    a, b = engine_script["tokens"]
    assert a != b and len(a) == len(b) == 32  # a new random token per execution
    assert (run.status, run.n_done, run.lease_owner) == ("done", 6, "")
    assert run.started_at == started and run.finished_at is not None
    assert execute(run).status == "inactive" and engine_script["worked"] == 2


def test_a_second_execution_while_the_lease_is_held_does_nothing(engine_script):
    run = make_run()
    seen = {}

    def during(run, lease):
        seen["inner"] = execute(run)
        seen["beat"] = lease.beat()

    engine_script["during"] = during
    assert execute(run).status == "done"
    assert seen["inner"].status == "busy" and seen["beat"] is LeaseState.HELD
    assert LEASE_S <= seen["inner"].retry_in_s <= LEASE_S + 1  # when that lease would go stale
    assert engine_script["worked"] == 1 and len(engine_script["tokens"]) == 1
    # a lease held by another live execution, seen from outside
    held = make_run(status="running", lease_owner="other", heartbeat_at=timezone.now())
    busy = execute(held)
    assert busy.status == "busy" and LEASE_S - 1 <= busy.retry_in_s <= LEASE_S + 1
    held.refresh_from_db()
    assert held.lease_owner == "other" and engine_script["worked"] == 1


def test_a_stale_lease_is_taken_over(engine_script):
    old = timezone.now() - timedelta(seconds=LEASE_S + 5)
    run = make_run(status="running", lease_owner="dead-worker", heartbeat_at=old)
    assert run.worker_gone
    assert execute(run, token="new-worker").status == "done"
    run.refresh_from_db()
    assert engine_script["tokens"] == ["new-worker"] and run.status == "done"


def test_a_lost_lease_stops_the_execution_without_ending_the_run(engine_script):
    run = make_run()

    def during(run, lease):
        EngineRun.objects.filter(pk=run.pk).update(lease_owner="someone-else")
        assert lease.beat() is LeaseState.LOST

    engine_script["during"] = during
    assert execute(run).status == "lost"
    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.finished_at) == ("running", "someone-else", None)


def test_cancel_a_queued_run_at_once(engine_script):
    run = engine.cancel(make_run())
    assert run.status == "cancelled" and run.finished_at is not None
    assert execute(run).status == "inactive" and engine_script["tokens"] == []
    with pytest.raises(RunStateError, match="only queued or running runs can be cancelled"):
        engine.cancel(run)


def test_cancel_a_running_run_asks_its_execution_to_stop(engine_script):
    engine_script["chunks"] = 5
    run = make_run()
    states = []

    def during(run, lease):
        states.append(engine.cancel(run).status)
        states.append(lease.beat())

    engine_script["during"] = during
    assert execute(run).status == "cancelled"
    run.refresh_from_db()
    assert states == ["cancelling", LeaseState.CANCELLING]
    assert (run.status, run.lease_owner, run.n_done) == ("cancelled", "", 3)
    assert run.finished_at is not None and engine_script["worked"] == 1


def test_a_cancelling_run_whose_worker_died_is_ended_without_work(engine_script):
    old = timezone.now() - timedelta(seconds=LEASE_S + 5)
    run = make_run(status="cancelling", lease_owner="dead", heartbeat_at=old)
    assert execute(run).status == "cancelled"
    run.refresh_from_db()
    assert run.status == "cancelled" and engine_script["tokens"] == []
    # cancelling it again while nobody holds it ends it too
    other = make_run(status="cancelling", lease_owner="dead", heartbeat_at=old)
    assert engine.cancel(other).status == "cancelled"


def test_resume_refuses_a_live_run_unless_forced(
    engine_script, enqueued, django_capture_on_commit_callbacks
):
    live = make_run(status="running", lease_owner="alive", heartbeat_at=timezone.now())
    with pytest.raises(RunStateError, match="its worker is alive"):
        engine.resume(live)
    assert enqueued == [] and engine_script["resumed"] == []
    with django_capture_on_commit_callbacks(execute=True):
        run = engine.resume(live, force=True)
    assert (run.status, run.lease_owner, run.heartbeat_at) == ("queued", "", None)
    assert enqueued == [(run.pk, None)] and engine_script["resumed"] == [run.pk]
    failed = make_run(status="failed", error="boom", finished_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        failed = engine.resume(failed)
    assert (failed.status, failed.error, failed.finished_at) == ("queued", "", None)
    done = make_run(status="done")
    with pytest.raises(RunStateError, match="nothing to resume"):
        engine.resume(done)


def test_resume_orphans_enqueues_runs_nobody_holds(engine_script, enqueued):
    now = timezone.now()
    queued = make_run()
    dead = make_run(
        status="running", lease_owner="dead", heartbeat_at=now - timedelta(seconds=LEASE_S + 1)
    )
    live = make_run(status="running", lease_owner="alive", heartbeat_at=now - timedelta(seconds=10))
    make_run(status="done")
    make_run(status="cancelled")
    resumed = engine.resume_orphans()
    assert resumed == [f"{LABEL}:{dead.pk}"]
    calls = dict(enqueued)
    # a queued run is the broker's (its message is redelivered); never started twice from here
    assert set(calls) == {dead.pk, live.pk} and queued.pk not in calls
    assert calls[dead.pk] is None
    # the live one is looked at when its lease would go stale (its worker may just have died)
    assert LEASE_S - 10 - 1 <= calls[live.pk] <= LEASE_S - 10 + 1


def test_a_raising_executor_fails_the_run_with_the_error_text(engine_script):
    engine_script["raise"] = RuntimeError("boom at item 3")
    run = make_run()
    assert execute(run).status == "failed"
    run.refresh_from_db()
    assert (run.status, run.error, run.lease_owner) == (
        "failed",
        "RuntimeError: boom at item 3",
        "",
    )
    assert run.finished_at is not None and (run.n_total, run.prompt_tokens) == (3, 7)


def test_the_outcome_decides_done_or_failed(engine_script):
    engine_script["outcome"] = ("failed", "2 item(s) failed")
    run = make_run()
    assert execute(run).status == "failed"
    run.refresh_from_db()
    assert (run.status, run.error, run.n_done) == ("failed", "2 item(s) failed", 3)
