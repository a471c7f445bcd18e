"""Migrating mining batches made on the old schema (own status words, ``cancel_requested``,
``runner``, ``n_documents``) to engine runs keeps every batch's state, counters and text."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("mining", "0001_initial")]

# (old status, cancel requested) -> new status
CASES = {
    "pending": ("pending", False, "queued"),
    "pending-cancel": ("pending", True, "cancelling"),
    "running": ("running", False, "running"),
    "running-cancel": ("running", True, "cancelling"),
    "completed": ("completed", False, "done"),
    "cancelled": ("cancelled", True, "cancelled"),
    "failed": ("failed", False, "failed"),
}


def _leaf():
    executor = MigrationExecutor(connection)
    return [key for key in executor.loader.graph.leaf_nodes() if key[0] == "mining"]


@pytest.fixture(autouse=True)
def _back_to_the_leaf():
    """Whatever happens in a test, the database ends at the latest migration."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(_leaf())


def test_old_batches_become_runs_with_their_state_counters_and_text():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Batch = old.get_model("mining", "MiningBatch")
    Usage = old.get_model("mining", "MiningStageUsage")
    beat = timezone.now() - timedelta(seconds=30)
    made = {}
    for i, (name, (status, cancel, _new)) in enumerate(CASES.items()):
        batch = Batch.objects.create(
            name=name,
            source_file=f"mining/uploads/{name}.jsonl",
            source_name=f"{name}.jsonl",
            source_format="jsonl",
            stages=[1, 2, 3],
            backends={"procedures": {"model": "m"}},
            options={"chunk_size": 8},
            status=status,
            cancel_requested=cancel,
            ingested=status != "pending",
            n_documents=40 + i,
            n_done=10 + i,
            error=f"boom {name}" if status == "failed" else "",
            runner=f"task-{name}" if status == "running" else "",
            heartbeat_at=beat,
        )
        Usage.objects.create(
            batch=batch,
            stage="procedures",
            requests=5 + i,
            prompt_tokens=1000 * (i + 1),
            completion_tokens=100 * (i + 1),
            cost_usd=Decimal("0.5") + i,
        )
        Usage.objects.create(
            batch=batch,
            stage="filter",
            requests=2,
            prompt_tokens=7,
            completion_tokens=3,
            cost_usd=Decimal("0.25"),
        )
        made[name] = batch.pk

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(_leaf())
    new = executor.loader.project_state(_leaf()).apps
    Batch = new.get_model("mining", "MiningBatch")
    assert not hasattr(Batch(), "cancel_requested") and not hasattr(Batch(), "runner")
    for i, (name, (status, _cancel, expected)) in enumerate(CASES.items()):
        b = Batch.objects.get(pk=made[name])
        assert b.status == expected, name
        assert (b.n_total, b.n_done, b.n_failed) == (40 + i, 10 + i, 0), name
        assert b.prompt_tokens == 1000 * (i + 1) + 7, name
        assert b.completion_tokens == 100 * (i + 1) + 3, name
        assert b.cost == Decimal("0.75") + i, name
        assert b.error == (f"boom {name}" if status == "failed" else ""), name
        assert b.lease_owner == (f"task-{name}" if status == "running" else ""), name
        assert b.heartbeat_at == beat, name
        assert b.ingested == (status != "pending"), name
        assert (b.name, b.source_name, b.stages, b.options) == (
            name,
            f"{name}.jsonl",
            [1, 2, 3],
            {"chunk_size": 8},
        )
        assert b.updated_at is not None


def test_migration_back_restores_the_old_words():
    from mining.models import MiningBatch

    rows = {
        status: MiningBatch.objects.create(
            name=status, source_file="x.jsonl", source_format="jsonl", status=status
        ).pk
        for status in ("queued", "running", "cancelling", "cancelled", "failed", "done")
    }
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    Batch = old.get_model("mining", "MiningBatch")
    got = {
        status: (b.status, b.cancel_requested)
        for status, pk in rows.items()
        for b in [Batch.objects.get(pk=pk)]
    }
    assert got == {
        "queued": ("pending", False),
        "running": ("running", False),
        "cancelling": ("running", True),
        "cancelled": ("cancelled", False),
        "failed": ("failed", False),
        "done": ("completed", False),
    }
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(_leaf())
    assert MiningBatch.objects.get(pk=rows["cancelling"]).status == "cancelling"
