"""Judge runs in batch mode (the provider's Batch API) against the local batch batch_server through
the real ``openai`` client, on PostgreSQL: a full batch, a batch that expires with part of its
requests done, one cancelled midway (the provider's batch cancelled, what ran stored), a request
that failed inside a batch retried, the batch rate, and a worker killed while its batch is open
(batch ids on the run, nothing stored twice, a real worker and the beat task)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import transaction

from benchmarks.models import ProviderBatch
from benchmarks.services import batch_runs
from core.runs import engine
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import runs as services
from tests.judging.factories import PRICED, make_data, make_judge
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
LABEL = JudgeRun._meta.label


def launch(batch_server, *, n: int, bad_every: int = 0, **judge_fields) -> JudgeRun:
    data = make_data(n=n, bad_every=bad_every)
    judge = make_judge(
        name="batch-judge",
        base_url=batch_server.base_url,
        preset=PRICED,
        batch_mode=True,
        **judge_fields,
    )
    return services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})


def step(run) -> str:
    outcome = engine.execute(LABEL, run.pk, chain=False).status
    run.refresh_from_db()
    return outcome


def test_a_full_batch_is_sent_once_polled_stored_and_priced_at_the_batch_rate(batch_server, sent):
    run = launch(batch_server, n=6, bad_every=3)
    assert step(run) == "waiting"  # one batch file sent; the run waits, no chunk chained
    (row,) = batch_runs.batches_of(run)
    assert row.n_requests == 6 and row.stored_at is None and run.status == "running"
    assert batch_server.calls["create"] == 1 and sent == [run.pk]  # the launch's chunk only
    assert batch_runs.poll()["enqueued"] == 0  # still running at the provider
    batch_server.finish()
    assert batch_runs.poll() == {"runs": 1, "ended": 1, "cancelled": 0, "enqueued": 1}
    assert sent == [run.pk, run.pk]
    assert step(run) == "done"
    assert (run.n_total, run.n_done, run.n_failed) == (6, 6, 0)
    assert Judgment.objects.filter(has_failure=True).count() == 2  # items 0 and 3 say BAD
    # 1000 prompt + 100 completion tokens a reply at $1 / $4 per M, half price in batch mode
    online = (Decimal(6000) * 1 + Decimal(600) * 4) / Decimal(1_000_000)
    assert run.cost == online / 2 and run.prompt_tokens == 6000
    row.refresh_from_db()
    assert row.stored_at is not None and row.n_stored == 6 and row.status == "completed"
    assert set(batch_server.ran.values()) == {1} and batch_server.calls["create"] == 1


def test_an_expired_batch_keeps_what_ran_and_sends_the_rest_again(batch_server, sent):
    run = launch(batch_server, n=5)
    assert step(run) == "waiting"
    batch_server.run(n=2)
    batch_server.expire()
    assert step(run) == "waiting"  # 2 stored; the 3 not run sent again, no attempt counted
    first, second = batch_runs.batches_of(run)
    assert (first.status, first.n_stored, first.n_returned) == ("expired", 2, 3)
    assert second.n_requests == 3 and set(second.item_keys) < set(first.item_keys)
    assert Judgment.objects.count() == 2
    assert not JudgeRunItem.objects.filter(run=run, attempts__gt=0).exists()
    batch_server.finish()
    assert step(run) == "done" and run.n_done == 5
    assert sorted(batch_server.ran.values()) == [1] * 5  # each request answered (billed) once


def test_a_cancelled_run_cancels_its_batch_and_stores_what_ran(batch_server, sent):
    run = launch(batch_server, n=6)
    assert step(run) == "waiting"
    batch_server.run(n=2)
    engine.cancel(run)
    counts = batch_runs.poll()  # beat: the run is not active, so its batch is cancelled
    assert counts["cancelled"] == 1 and batch_server.calls["cancel"] == 1
    (row,) = batch_runs.batches_of(run)
    assert row.status == "cancelled" and row.cancel_sent and row.n_stored == 2
    assert Judgment.objects.count() == 2  # paid for, so kept
    run.refresh_from_db()
    if run.status == "cancelling":
        assert step(run) == "cancelled"
    assert run.status == "cancelled" and batch_server.calls["create"] == 1  # nothing sent again
    assert batch_runs.poll()["runs"] == 0 and batch_server.calls["cancel"] == 1


def test_a_request_that_failed_inside_a_batch_is_retried_as_usual(batch_server, sent):
    run = launch(batch_server, n=4)
    assert step(run) == "waiting"
    (row,) = batch_runs.batches_of(run)
    failing = str(row.item_keys[1])
    batch_server.fail(lambda custom_id: custom_id == failing, status=500)
    batch_server.finish()
    assert step(run) == "waiting"  # 3 stored; the failed one counted an attempt, sent again
    item = JudgeRunItem.objects.get(pk=int(failing))
    assert item.attempts == 1 and "HTTP 500" in item.error and item.judgment_id is None
    second = batch_runs.batches_of(run)[1]
    assert second.item_keys == [int(failing)]
    batch_server.finish()
    assert step(run) == "done" and (run.n_done, run.n_failed) == (4, 0)


def test_a_non_retryable_failure_inside_a_batch_fails_the_item_at_once(batch_server, sent):
    run = launch(batch_server, n=3)
    step(run)
    failing = str(batch_runs.batches_of(run)[0].item_keys[0])
    batch_server.fail(lambda custom_id: custom_id == failing, status=400)
    batch_server.finish()
    assert step(run) == "failed"
    assert run.n_failed == 1 and "HTTP 400" in run.error and batch_server.calls["create"] == 1


def test_storing_one_output_file_twice_stores_it_once(batch_server, sent):
    run = launch(batch_server, n=3)
    step(run)
    batch_server.finish()
    (row,) = batch_runs.batches_of(run)
    from benchmarks.llm.registry import build_backend

    backend = build_backend(run.judge.backend_config())
    state = backend.retrieve(row.batch_id)
    adapter = batch_runs.adapter_for(JudgeRun)
    assert (
        batch_runs.store_batch(run=run, row=row, state=state, backend=backend, adapter=adapter) == 3
    )
    assert (
        batch_runs.store_batch(run=run, row=row, state=state, backend=backend, adapter=adapter) == 0
    )
    assert Judgment.objects.count() == 3
    assert step(run) == "done" and batch_server.calls["create"] == 1


@pytest.mark.worker
def test_a_killed_worker_leaves_its_batch_to_the_next_one(batch_server, tmp_path):
    """A real worker sends the batch; it is killed; the provider finishes; a new worker runs
    the beat task, which enqueues the run, and the run ends with each item stored once."""
    env = {"RUN_LEASE_SECONDS": "2", "BATCH_POLL_SECONDS": "1"}
    first = start_worker(tmp_path, concurrency=1, extra_env=env)
    try:
        with transaction.atomic():
            run = launch(batch_server, n=8)
        wait_for(
            lambda: ProviderBatch.objects.filter(run_id=run.pk).exists(),
            timeout=60,
            message=f"the batch sent; log:\n{first.log()[-2000:]}",
        )
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).lease_owner == "",
            timeout=30,
            message="the chunk to hand the run over",
        )
    finally:
        first.kill()
    batch_server.finish()
    from benchmarks.tasks import batches_poll

    with running_worker(tmp_path, concurrency=1, extra_env=env, queue=first.queue) as second:
        batches_poll.delay()
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
            timeout=90,
            message=f"the run to finish; log:\n{second.log()[-3000:]}",
        )
    run.refresh_from_db()
    assert (run.n_done, run.n_total) == (8, 8) and Judgment.objects.count() == 8
    assert batch_server.calls["create"] == 1 and set(batch_server.ran.values()) == {1}
    assert ProviderBatch.objects.get(run_id=run.pk).n_stored == 8
