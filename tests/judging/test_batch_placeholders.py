"""A batch created at the provider but never written down (the worker died between
``batches.create`` and the row): the row is written first with a placeholder and a token in the
batch's metadata, and the next chunk — or the poll, once the placeholder is older than the
lease — finds the batch by its token (adopted: nothing sent twice) or drops the placeholder
(its items are sent again). Against the local batch batch_server through the real ``openai`` client,
on PostgreSQL, with a real worker killed while the provider holds its answer."""

from __future__ import annotations

import threading

import pytest
from django.db import transaction

from benchmarks.models import ProviderBatch
from benchmarks.services import batch_runs
from judging.models import JudgeRun, Judgment
from tests.judging.test_batch_runs import launch, step
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
LABEL = JudgeRun._meta.label


def as_placeholder(batch_server, run, *, at_provider: bool) -> ProviderBatch:
    """The run's one batch row turned back into the placeholder its worker wrote before asking
    the provider: as if the worker had died before writing the batch id (``at_provider``: the
    batch was created; else it never got there)."""
    (row,) = batch_runs.batches_of(run)
    batch = batch_server.batches[row.batch_id]
    token = batch["metadata"][batch_runs.SUBMISSION_KEY]  # sent with every batch
    if not at_provider:
        del batch_server.batches[row.batch_id]
    ProviderBatch.objects.filter(pk=row.pk).update(batch_id=batch_runs.PLACEHOLDER + token)
    row.refresh_from_db()
    return row


def test_a_placeholder_whose_batch_exists_is_adopted_and_nothing_is_sent_twice(batch_server, sent):
    run = launch(batch_server, n=4)
    assert step(run) == "waiting" and batch_server.calls["create"] == 1
    row = as_placeholder(batch_server, run, at_provider=True)
    batch_id = next(iter(batch_server.batches))

    assert step(run) == "waiting"
    row.refresh_from_db()
    assert row.batch_id == batch_id and batch_server.calls["list"] >= 1
    assert batch_server.calls["create"] == 1  # adopted, not sent again
    batch_server.finish()
    assert step(run) == "done"
    assert run.n_done == 4 and Judgment.objects.count() == 4
    assert set(batch_server.ran.values()) == {1}


def test_a_placeholder_that_never_reached_the_provider_is_dropped_and_its_items_sent(
    batch_server,
    sent,
):
    run = launch(batch_server, n=3)
    assert step(run) == "waiting"
    row = as_placeholder(batch_server, run, at_provider=False)
    assert step(run) == "waiting"
    assert not ProviderBatch.objects.filter(pk=row.pk).exists()
    (new,) = batch_runs.batches_of(run)
    assert sorted(new.item_keys) == sorted(row.item_keys) and batch_server.calls["create"] == 2
    batch_server.finish()
    assert step(run) == "done" and run.n_done == 3


def test_the_poll_leaves_a_young_placeholder_alone_and_resolves_an_old_one(
    batch_server,
    sent,
    settings,
):
    run = launch(batch_server, n=2)
    assert step(run) == "waiting"
    row = as_placeholder(batch_server, run, at_provider=False)
    settings.RUN_LEASE_SECONDS = 600
    assert batch_runs.poll()["enqueued"] == 0
    assert ProviderBatch.objects.filter(pk=row.pk).exists()  # a worker may be creating it
    settings.RUN_LEASE_SECONDS = 0
    assert batch_runs.poll()["enqueued"] == 1  # dropped: the run is sent to send its items
    assert not ProviderBatch.objects.filter(pk=row.pk).exists()


@pytest.mark.worker
def test_a_worker_killed_between_create_and_its_row_leaves_no_orphan(
    batch_server, tmp_path, monkeypatch
):
    """The provider creates the batch and holds its answer; the worker is killed meanwhile. The
    next worker adopts the batch by its token: one create, each request answered once."""
    from config.celery import app

    env = {"RUN_LEASE_SECONDS": "2", "BATCH_POLL_SECONDS": "1"}
    batch_server.create_gate = threading.Event()
    monkeypatch.setattr(app.conf, "task_default_queue", app.conf.task_default_queue)  # restored
    first = start_worker(tmp_path, concurrency=1, extra_env=env)
    try:
        with transaction.atomic():
            run = launch(batch_server, n=6)
        wait_for(
            lambda: batch_server.calls["create"] == 1,
            timeout=120,
            message=f"the batch created; log:\n{first.log()[-2000:]}",
        )
    finally:
        first.kill()
    batch_server.create_gate.set()
    (row,) = batch_runs.batches_of(run)
    assert row.batch_id.startswith(batch_runs.PLACEHOLDER)  # what the old code never wrote
    batch_server.finish()
    from benchmarks.tasks import batches_poll

    with running_worker(tmp_path, concurrency=1, extra_env=env, queue=first.queue) as second:
        wait_for(
            lambda: batches_poll.delay() and JudgeRun.objects.get(pk=run.pk).status == "done",
            timeout=180,
            interval=1.5,
            message=f"the run to finish; log:\n{second.log()[-3000:]}",
        )
    run.refresh_from_db()
    assert (run.n_done, run.n_total) == (6, 6) and Judgment.objects.count() == 6
    assert batch_server.calls["create"] == 1 and set(batch_server.ran.values()) == {1}
    (row,) = batch_runs.batches_of(run)
    assert not row.batch_id.startswith(batch_runs.PLACEHOLDER) and row.n_stored == 6
