"""The migration of judge runs onto the run engine keeps existing data: a database made on the
schema before it, with runs in every old status, is migrated forward and checked field by field
(then back, then forward again: it is reversible)."""

from __future__ import annotations

import importlib
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("judging", "0001_judges_runs_judgments")
OURS = ("judging", "0002_judge_runs_on_the_engine")
OLD_LEASE_S = importlib.import_module(
    "judging.migrations.0002_judge_runs_on_the_engine"
).OLD_LEASE_S

# old status, cancel requested, lease owner, new status
CASES = {
    "pending": ("pending", False, "", "queued"),
    "pending-cancel": ("pending", True, "celery-task-1", "cancelling"),
    "running": ("running", False, "celery-task-2", "running"),
    "running-cancel": ("running", True, "celery-task-3", "cancelling"),
    "running-released": ("running", False, "", "running"),
    "succeeded": ("succeeded", False, "", "done"),
    "failed": ("failed", False, "", "failed"),
    "cancelled": ("cancelled", True, "", "cancelled"),
}


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection)


def _leaves():
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _before():
    """Judging at the migration before ours, every other app at its latest migration that does
    not need judging's later ones (an app whose migrations all do is left out: Django unapplies
    it with them)."""
    graph = MigrationExecutor(connection).loader.graph
    later = {n for n in graph.nodes if n[0] == "judging"} - set(graph.forwards_plan(BEFORE))
    others = [n for n in _leaves() if n[0] != "judging" and not later & set(graph.forwards_plan(n))]
    return [*others, BEFORE]


def _old_rows(apps, now):
    """Runs in every old status (with counters, tokens, cost, errors, a lease) and two items:
    one linked to a judgment made before its run (reused), one to a judgment made by it."""
    User = apps.get_model("auth", "User")
    Judge = apps.get_model("judging", "Judge")
    JudgeRun = apps.get_model("judging", "JudgeRun")
    JudgeRunItem = apps.get_model("judging", "JudgeRunItem")
    Judgment = apps.get_model("judging", "Judgment")
    Dataset = apps.get_model("benchmarks", "Dataset")
    Procedure = apps.get_model("benchmarks", "Procedure")
    Generator = apps.get_model("benchmarks", "Generator")
    Generation = apps.get_model("benchmarks", "Generation")

    user = User.objects.create(username="old-admin")
    judge = Judge.objects.create(name="old-judge", model="m", judge_id="k" * 64)
    ds = Dataset.objects.create(name="old-ds")
    gen = Generator.objects.create(name="old-gen", model="m")
    gens = [
        Generation.objects.create(
            procedure=Procedure.objects.create(
                dataset=ds, source_example_id=f"ex-{i}", goal="g", steps=["a"]
            ),
            generator=gen,
            predicted_steps=["b"],
        )
        for i in range(2)
    ]
    expected = {}
    for i, (key, (status, cancel, owner, new_status)) in enumerate(CASES.items()):
        lease_until = now + timedelta(seconds=30 + i) if owner else None
        fields = {
            "judge": judge,
            "selection": {"dataset": ds.pk, "case": key},
            "status": status,
            "n_total": 100 + i,
            "n_done": 50 + i,
            "n_reused": 5 + i,
            "n_errors": 3 + i,
            "n_parse_failed": 2 + i,
            "prompt_tokens": 10_000 + i,
            "completion_tokens": 2_000 + i,
            "cost": Decimal(f"1.25{i}"),
            "estimated_cost": Decimal(f"2.5{i}"),
            "cancel_requested": cancel,
            "error": f"error text of {key}" if status == "failed" else "",
            "lease_owner": owner,
            "lease_until": lease_until,
            "created_by": user,
            "started_at": None if status == "pending" else now - timedelta(minutes=5),
            "finished_at": now if status in ("succeeded", "failed", "cancelled") else None,
        }
        run = JudgeRun.objects.create(**fields)
        expected[run.pk] = (fields, new_status)
    first = min(expected)
    JudgeRun.objects.filter(pk=first).update(created_at=now - timedelta(hours=1))
    before = Judgment.objects.create(
        judge=judge, judge_key=judge.judge_id, content_hash="h0", prompt_tokens=7
    )
    Judgment.objects.filter(pk=before.pk).update(created_at=now - timedelta(hours=2))
    after = Judgment.objects.create(
        judge=judge, judge_key=judge.judge_id, content_hash="h1", prompt_tokens=9
    )
    reused = JudgeRunItem.objects.create(
        run_id=first, generation=gens[0], content_hash="h0", judgment=before
    )
    asked = JudgeRunItem.objects.create(
        run_id=first, generation=gens[1], content_hash="h1", judgment=after, attempts=1
    )
    return expected, reused.pk, asked.pk


def test_judge_runs_migrate_with_every_old_status_kept():
    now = timezone.now()
    executor = _migrate(_before())
    old_apps = executor.loader.project_state(_before()).apps
    expected, reused_pk, asked_pk = _old_rows(old_apps, now)

    executor = _migrate(_leaves())
    new_apps = executor.loader.project_state(executor.loader.graph.leaf_nodes()).apps
    JudgeRun = new_apps.get_model("judging", "JudgeRun")
    JudgeRunItem = new_apps.get_model("judging", "JudgeRunItem")
    field_names = {f.name for f in JudgeRun._meta.get_fields()}
    assert {"cancel_requested", "lease_until", "n_errors"}.isdisjoint(field_names)
    for pk, (old, new_status) in expected.items():
        run = JudgeRun.objects.get(pk=pk)
        case = old["selection"]["case"]
        assert run.status == new_status, case
        assert run.n_failed == old["n_errors"], case
        for name in (
            "selection",
            "n_total",
            "n_done",
            "n_reused",
            "n_parse_failed",
            "prompt_tokens",
            "completion_tokens",
            "cost",
            "estimated_cost",
            "error",
            "lease_owner",
            "started_at",
            "finished_at",
        ):
            assert getattr(run, name) == old[name], (case, name)
        assert run.judge_id == old["judge"].pk and run.created_by_id == old["created_by"].pk
        if old["lease_until"] is None:
            assert run.heartbeat_at is None, case
        else:  # the lease's last renewal is the last heartbeat
            assert run.heartbeat_at == old["lease_until"] - timedelta(seconds=OLD_LEASE_S), case
    assert JudgeRunItem.objects.get(pk=reused_pk).reused is True
    asked = JudgeRunItem.objects.get(pk=asked_pk)
    assert (asked.reused, asked.attempts) == (False, 1)

    # and back: the old words, the cancel requests and the leases return
    executor = _migrate(_before())
    OldRun = executor.loader.project_state(_before()).apps.get_model("judging", "JudgeRun")
    for pk, (old, _) in expected.items():
        run = OldRun.objects.get(pk=pk)
        case = old["selection"]["case"]
        want = "running" if case == "pending-cancel" else old["status"]
        assert run.status == want, case
        assert run.n_errors == old["n_errors"], case
        assert run.cancel_requested == (old["cancel_requested"] and old["status"] != "cancelled")
        if old["status"] in ("pending", "running"):
            assert run.lease_until == old["lease_until"], case
    _migrate(_leaves())
    assert OURS in MigrationExecutor(connection).loader.applied_migrations
