"""Builders for core's tests: the test-only run type (tests/runapp) that the run engine is
tested on. Plain keyword-only functions, as in every tests/*/factories.py."""

from __future__ import annotations

from tests.runapp.models import EngineItem, EngineRun


def make_engine_run(*, items: int = 0, n_lanes: int = 1, **fields) -> EngineRun:
    """A test run (``fields`` on the row: status, lease_owner, heartbeat_at…) with ``items``
    item rows, item *k* in lane ``k % n_lanes``."""
    run = EngineRun.objects.create(**fields)
    EngineItem.objects.bulk_create(
        EngineItem(run=run, position=k, lane=k % n_lanes) for k in range(items)
    )
    return run
