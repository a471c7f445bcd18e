"""Builders for core's tests and the API tests of every app: an API client signed in as a
user, and the test-only run type (tests/runapp) that the run engine is tested on. Plain
functions, options keyword-only, as in every tests/*/factories.py."""

from __future__ import annotations

from rest_framework.test import APIClient

from tests.runapp.models import EngineItem, EngineRun

# how long a lease of the test run type lasts in the engine's tests (the engine_script fixture)
ENGINE_LEASE_S = 30


def make_engine_run(*, items: int = 0, n_lanes: int = 1, **fields) -> EngineRun:
    """A test run (``fields`` on the row: status, lease_owner, heartbeat_at…) with ``items``
    item rows, item *k* in lane ``k % n_lanes``."""
    run = EngineRun.objects.create(**fields)
    EngineItem.objects.bulk_create(
        EngineItem(run=run, position=k, lane=k % n_lanes) for k in range(items)
    )
    return run


def api_client(user) -> APIClient:
    """An API client authenticated as ``user`` (no token, no session)."""
    client = APIClient()
    client.force_authenticate(user)
    return client
