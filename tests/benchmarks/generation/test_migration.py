"""benchmarks 0004 moves generation runs onto the run engine: a database created on the old
schema, with runs in every old status, migrates forward with every field mapped, and back."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("benchmarks", "0003_study_flow")]
AFTER = [("benchmarks", "0004_generationrun_run_engine")]

# old (status, cancel_requested) → new status
STATUS_MAP = {
    ("pending", False): "queued",
    ("pending", True): "cancelling",
    ("running", False): "running",
    ("running", True): "cancelling",
    ("completed", False): "done",
    ("failed", False): "failed",
    ("cancelled", False): "cancelled",
}
# what going back gives (a pending run with a cancel request comes back as a running one)
BACK_MAP = {
    "queued": ("pending", False),
    "cancelling": ("running", True),
    "running": ("running", False),
    "done": ("completed", False),
    "failed": ("failed", False),
    "cancelled": ("cancelled", False),
}


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_old_runs_migrate_to_engine_statuses_and_back():
    try:
        old_apps = _migrate(BEFORE)
        User = old_apps.get_model("auth", "User")
        Dataset = old_apps.get_model("benchmarks", "Dataset")
        Generator = old_apps.get_model("benchmarks", "Generator")
        OldRun = old_apps.get_model("benchmarks", "GenerationRun")
        user = User.objects.create(username="migrator")
        dataset = Dataset.objects.create(name="mig", version="v1")
        now = timezone.now()
        expected = {}
        for i, ((status, cancel), new_status) in enumerate(STATUS_MAP.items()):
            started = status != "pending"
            finished = status in ("completed", "failed", "cancelled")
            run = OldRun.objects.create(
                generator=Generator.objects.create(name=f"g{i}"),
                dataset=dataset,
                model=f"m{i}",
                status=status,
                cancel_requested=cancel,
                epoch=2 if started else 0,
                cursor=100 + i,
                n_total=50 + i,
                n_done=20 + i,
                n_failed=i,
                prompt_tokens=1000 + i,
                completion_tokens=500 + i,
                cost=Decimal("0.012345") + i,
                errors=[{"source_example_id": f"ex-{i}", "procedure_id": i, "error": "HTTP 400"}],
                scores={"n_examples": i} if finished else {},
                message=f"message {i}" if status in ("failed", "cancelled") else "",
                created_by=user,
                started_at=now - timedelta(minutes=10) if started else None,
                finished_at=now if finished else None,
            )
            expected[run.pk] = (status, cancel, new_status)

        new_apps = _migrate(AFTER)
        NewRun = new_apps.get_model("benchmarks", "GenerationRun")
        fields = {f.name for f in NewRun._meta.get_fields()}
        assert {"lease_owner", "heartbeat_at", "error"} <= fields
        assert not {"epoch", "cancel_requested", "message"} & fields
        for run in NewRun.objects.order_by("pk"):
            status, cancel, new_status = expected[run.pk]
            i = run.cursor - 100
            assert run.status == new_status, (status, cancel)
            assert (run.n_total, run.n_done, run.n_failed) == (50 + i, 20 + i, i)
            assert (run.prompt_tokens, run.completion_tokens) == (1000 + i, 500 + i)
            assert run.cost == Decimal("0.012345") + i
            assert run.errors == [
                {"source_example_id": f"ex-{i}", "procedure_id": i, "error": "HTTP 400"}
            ]
            assert run.error == (f"message {i}" if status in ("failed", "cancelled") else "")
            assert run.scores == (
                {"n_examples": i} if status in ("completed", "failed", "cancelled") else {}
            )
            assert (run.lease_owner, run.heartbeat_at) == ("", None)
            assert run.created_by_id == user.pk and run.model == f"m{i}"
            assert (run.started_at is None) == (status == "pending")
            assert (run.finished_at is None) == (status in ("pending", "running"))
        assert NewRun.objects.count() == len(STATUS_MAP)

        old_apps = _migrate(BEFORE)
        OldRun = old_apps.get_model("benchmarks", "GenerationRun")
        for run in OldRun.objects.order_by("pk"):
            status, _, new_status = expected[run.pk]
            i = run.cursor - 100
            assert (run.status, run.cancel_requested) == BACK_MAP[new_status]
            assert run.message == (f"message {i}" if status in ("failed", "cancelled") else "")
            assert (run.n_total, run.n_done, run.n_failed, run.prompt_tokens) == (
                50 + i,
                20 + i,
                i,
                1000 + i,
            )
            assert run.epoch == (0 if status == "pending" else 1)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
