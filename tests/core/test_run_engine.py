"""The run engine (core.runs.engine) on real run rows (JudgeRun) with a test executor: leases,
busy and stale executions, cancel, resume, orphans, failures and counters."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.runs import engine
from core.runs.engine import LeaseState, RunExecutor, RunStateError
from judging.models import Judge, JudgeRun

pytestmark = pytest.mark.django_db

LEASE_S = 30
LABEL = JudgeRun._meta.label


class ScriptedExecutor(RunExecutor):
    """Works ``script["chunks"]`` chunks; ``script["during"](run, lease)`` runs inside each one
    (another execution, a cancel…); ``script["raise"]`` makes a chunk fail."""

    script: dict = {}

    def work_chunk(self, run, lease) -> bool:
        s = self.script
        s["tokens"].append(lease.token)
        if s.get("during"):
            s["during"](run, lease)
        if s.get("raise"):
            raise s["raise"]
        s["worked"] += 1
        return s["worked"] < s["chunks"]

    def counters(self, run) -> dict:
        s = self.script
        return {"n_total": 3 * s["chunks"], "n_done": 3 * s["worked"], "prompt_tokens": 7}

    def outcome(self, run) -> tuple[str, str]:
        return self.script.get("outcome", ("done", ""))

    def on_resume(self, run) -> None:
        self.script["resumed"].append(run.pk)


@pytest.fixture
def script(monkeypatch, settings):
    settings.RUN_LEASE_SECONDS = LEASE_S
    state = {"chunks": 1, "worked": 0, "tokens": [], "resumed": []}
    monkeypatch.setattr(ScriptedExecutor, "script", state)
    monkeypatch.setattr(JudgeRun, "executor_path", f"{__name__}.ScriptedExecutor")
    engine._executor.cache_clear()
    yield state
    engine._executor.cache_clear()


@pytest.fixture
def enqueued(monkeypatch):
    calls: list[tuple[int, float | None]] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue", lambda run, countdown=None: calls.append((run.pk, countdown))
    )
    return calls


def make_run(**fields) -> JudgeRun:
    judge = Judge.objects.get_or_create(name="engine-judge", defaults={"model": "m"})[0]
    return JudgeRun.objects.create(judge=judge, **fields)


def execute(run, **kw) -> engine.ChunkOutcome:
    return engine.execute(LABEL, run.pk, chain=False, **kw)


def test_each_execution_takes_the_lease_with_a_fresh_token_and_counts(script):
    script["chunks"] = 2
    run = make_run()
    first = execute(run)
    run.refresh_from_db()
    assert first.status == "more"
    assert (run.status, run.lease_owner, run.started_at is not None) == ("running", "", True)
    assert (run.n_total, run.n_done, run.prompt_tokens) == (6, 3, 7)  # written from counters()
    started = run.started_at
    assert execute(run).status == "done"
    run.refresh_from_db()
    a, b = script["tokens"]
    assert a != b and len(a) == len(b) == 32  # a new random token per execution
    assert (run.status, run.n_done, run.lease_owner) == ("done", 6, "")
    assert run.started_at == started and run.finished_at is not None
    assert execute(run).status == "inactive" and script["worked"] == 2


def test_a_second_execution_while_the_lease_is_held_does_nothing(script):
    run = make_run()
    seen = {}

    def during(run, lease):
        seen["inner"] = execute(run)
        seen["beat"] = lease.beat()

    script["during"] = during
    assert execute(run).status == "done"
    assert seen["inner"].status == "busy" and seen["beat"] is LeaseState.HELD
    assert LEASE_S <= seen["inner"].retry_in_s <= LEASE_S + 1  # when that lease would go stale
    assert script["worked"] == 1 and len(script["tokens"]) == 1
    # a lease held by another live execution, seen from outside
    held = make_run(status="running", lease_owner="other", heartbeat_at=timezone.now())
    busy = execute(held)
    assert busy.status == "busy" and LEASE_S - 1 <= busy.retry_in_s <= LEASE_S + 1
    held.refresh_from_db()
    assert held.lease_owner == "other" and script["worked"] == 1


def test_a_stale_lease_is_taken_over(script):
    old = timezone.now() - timedelta(seconds=LEASE_S + 5)
    run = make_run(status="running", lease_owner="dead-worker", heartbeat_at=old)
    assert run.worker_gone
    assert execute(run, token="new-worker").status == "done"
    run.refresh_from_db()
    assert script["tokens"] == ["new-worker"] and run.status == "done"


def test_a_lost_lease_stops_the_execution_without_ending_the_run(script):
    run = make_run()

    def during(run, lease):
        JudgeRun.objects.filter(pk=run.pk).update(lease_owner="someone-else")
        assert lease.beat() is LeaseState.LOST

    script["during"] = during
    assert execute(run).status == "lost"
    run.refresh_from_db()
    assert (run.status, run.lease_owner, run.finished_at) == ("running", "someone-else", None)


def test_cancel_a_queued_run_at_once(script):
    run = engine.cancel(make_run())
    assert run.status == "cancelled" and run.finished_at is not None
    assert execute(run).status == "inactive" and script["tokens"] == []
    with pytest.raises(RunStateError, match="only queued or running runs can be cancelled"):
        engine.cancel(run)


def test_cancel_a_running_run_asks_its_execution_to_stop(script):
    script["chunks"] = 5
    run = make_run()
    states = []

    def during(run, lease):
        states.append(engine.cancel(run).status)
        states.append(lease.beat())

    script["during"] = during
    assert execute(run).status == "cancelled"
    run.refresh_from_db()
    assert states == ["cancelling", LeaseState.CANCELLING]
    assert (run.status, run.lease_owner, run.n_done) == ("cancelled", "", 3)
    assert run.finished_at is not None and script["worked"] == 1


def test_a_cancelling_run_whose_worker_died_is_ended_without_work(script):
    old = timezone.now() - timedelta(seconds=LEASE_S + 5)
    run = make_run(status="cancelling", lease_owner="dead", heartbeat_at=old)
    assert execute(run).status == "cancelled"
    run.refresh_from_db()
    assert run.status == "cancelled" and script["tokens"] == []
    # cancelling it again while nobody holds it ends it too
    other = make_run(status="cancelling", lease_owner="dead", heartbeat_at=old)
    assert engine.cancel(other).status == "cancelled"


def test_resume_refuses_a_live_run_unless_forced(
    script, enqueued, django_capture_on_commit_callbacks
):
    live = make_run(status="running", lease_owner="alive", heartbeat_at=timezone.now())
    with pytest.raises(RunStateError, match="its worker is alive"):
        engine.resume(live)
    assert enqueued == [] and script["resumed"] == []
    with django_capture_on_commit_callbacks(execute=True):
        run = engine.resume(live, force=True)
    assert (run.status, run.lease_owner, run.heartbeat_at) == ("queued", "", None)
    assert enqueued == [(run.pk, None)] and script["resumed"] == [run.pk]
    failed = make_run(status="failed", error="boom", finished_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        failed = engine.resume(failed)
    assert (failed.status, failed.error, failed.finished_at) == ("queued", "", None)
    done = make_run(status="done")
    with pytest.raises(RunStateError, match="nothing to resume"):
        engine.resume(done)


def test_resume_orphans_enqueues_runs_nobody_holds(script, enqueued):
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


def test_a_raising_executor_fails_the_run_with_the_error_text(script):
    script["raise"] = RuntimeError("boom at item 3")
    run = make_run()
    assert execute(run).status == "failed"
    run.refresh_from_db()
    assert (run.status, run.error, run.lease_owner) == (
        "failed",
        "RuntimeError: boom at item 3",
        "",
    )
    assert run.finished_at is not None and (run.n_total, run.prompt_tokens) == (3, 7)


def test_the_outcome_decides_done_or_failed(script):
    script["outcome"] = ("failed", "2 item(s) failed")
    run = make_run()
    assert execute(run).status == "failed"
    run.refresh_from_db()
    assert (run.status, run.error, run.n_done) == ("failed", "2 item(s) failed", 3)
