"""Fixtures of the run engine's tests (the test-only run type, tests/runapp)."""

from __future__ import annotations

import pytest

from tests.core.factories import ENGINE_LEASE_S
from tests.runapp.executor import ScriptedExecutor, fresh_script


@pytest.fixture
def engine_script(monkeypatch, settings):
    """The script of the test run type's executor (tests/runapp/executor.py), fresh per test;
    leases last ``ENGINE_LEASE_S`` seconds."""
    settings.RUN_LEASE_SECONDS = ENGINE_LEASE_S
    state = fresh_script()
    monkeypatch.setattr(ScriptedExecutor, "script", state)
    yield state


@pytest.fixture
def enqueued(monkeypatch):
    """The chunk tasks the engine sends, instead of sending them: (run id, countdown) for a
    whole run, (run id, countdown, lane) for a lane."""
    calls: list[tuple] = []

    def record(run, countdown=None, lane=None):
        calls.append((run.pk, countdown) if lane is None else (run.pk, countdown, lane))

    monkeypatch.setattr("core.runs.engine.enqueue", record)
    return calls
