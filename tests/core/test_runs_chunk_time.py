"""A chunk is bounded in time (``RUN_CHUNK_SECONDS``): past it the lease's beat answers ``DUE``,
the executor stores what is in flight and returns, and the next chunk goes on. Keeps every chunk
shorter than the broker's visibility timeout whatever the backend's speed. On the test-only run
type (tests/runapp); a judge run's chunks: tests/judging/test_run_chunk_time.py."""

from __future__ import annotations

import time

import pytest

from core.runs import engine
from core.runs.engine import LeaseState
from tests.core.factories import make_engine_run
from tests.runapp.models import EngineRun

pytestmark = pytest.mark.django_db


def test_a_due_lease_is_still_held_and_says_so(settings):
    settings.RUN_CHUNK_SECONDS = 30
    run = make_engine_run(lease_owner="tok", status="running")
    fresh = engine.Lease(EngineRun, run.pk, "tok", due=time.monotonic() + 30)
    assert fresh.beat() is LeaseState.HELD
    due = engine.Lease(EngineRun, run.pk, "tok", due=time.monotonic() - 1)
    assert due.beat() is LeaseState.DUE
    assert engine.Lease(EngineRun, run.pk, "other", due=time.monotonic() - 1).beat() is (
        LeaseState.LOST
    )


def test_a_chunk_past_its_time_hands_over_and_loses_nothing(engine_script, settings):
    settings.RUN_CHUNK_SECONDS = 0.3
    engine_script["item_s"] = 0.03  # 30 items: about 1 s of work
    run = make_engine_run(items=30)
    outcomes = []
    while not outcomes or outcomes[-1] == "more":
        outcomes.append(engine.execute(EngineRun._meta.label, run.pk, chain=False).status)
        assert len(outcomes) < 30
    run.refresh_from_db()
    assert outcomes[0] == "more" and outcomes[-1] == "done" and len(outcomes) >= 2, outcomes
    assert (run.status, run.n_done, run.n_total) == ("done", 30, 30)
    positions = [position for position, _ in engine_script["items"]]
    assert positions == list(range(30))  # each chunk went on where the last stopped: none twice
