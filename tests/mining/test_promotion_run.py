"""A batch's promotion is a run of the engine (MiningPromotion): worked by the one chunk task,
cancelled (queued: at once; running: its dataset is not kept) and resumed through the engine,
picked up by the orphan scan, its counters counted from rows (candidates, procedures made)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks.models import Dataset, Procedure
from core.runs import engine
from mining.models import MiningPromotion
from mining.services import promotion
from tests.mining.factories import done_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """The run ids whose chunk the engine sends (sent at once: no commit in these tests)."""
    sent: list[int] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue", lambda run, countdown=None, lane=None: sent.append(run.pk)
    )
    monkeypatch.setattr(
        "django.db.transaction.on_commit", lambda fn, using=None, robust=False: fn()
    )
    return sent


def _asked(name="promoted"):
    batch = done_batch()
    promotion.batch_promote_request(batch=batch, dataset_name=name, per_topic=4, seed=1)
    return batch, MiningPromotion.objects.get(batch=batch)


def test_a_promotion_is_a_run_counted_from_rows(enqueued):
    batch, run = _asked()
    assert enqueued == [run.pk] and run.status == "queued" and "promotion" not in batch.options
    state = promotion.batch_promote_work(batch_id=batch.pk)
    run.refresh_from_db()
    dataset = Dataset.objects.get(name="promoted")
    assert (run.status, run.dataset_id, run.n_total, run.n_done) == ("done", dataset.pk, 8, 6)
    assert state["promoted"] == 6 == Procedure.objects.filter(dataset=dataset).count()
    assert state["status"] == "done" and not state["pending"] and state["dataset"] == "promoted@v1"
    # counted from rows, never a tally
    Procedure.objects.filter(dataset=dataset).first().delete()
    assert engine.executor_for(MiningPromotion).counters(run) == {"n_total": 8, "n_done": 5}


def test_a_promotion_is_cancelled_and_resumed_through_the_engine(monkeypatch, enqueued):
    batch, run = _asked()
    assert promotion.promotion_cancel(promotion=run).status == "cancelled"  # queued: at once
    assert promotion.promotion_state(batch)["status"] == "cancelled"
    promotion.promotion_resume(promotion=run)
    assert enqueued == [run.pk, run.pk]
    # cancelled while it samples: the dataset's transaction is rolled back
    real = promotion.stratified_sample

    def cancelled_meanwhile(*args, **kw):
        engine.cancel(MiningPromotion.objects.get(pk=run.pk))
        return real(*args, **kw)

    monkeypatch.setattr("mining.services.promotion.stratified_sample", cancelled_meanwhile)
    assert engine.execute(run._meta.label, run.pk, chain=False).status == "cancelled"
    run.refresh_from_db()
    assert run.status == "cancelled" and run.dataset_id is None and run.n_done == 0
    assert not Dataset.objects.filter(name="promoted").exists()
    monkeypatch.setattr("mining.services.promotion.stratified_sample", real)
    promotion.promotion_resume(promotion=run)
    assert promotion.batch_promote_work(batch_id=batch.pk)["status"] == "done"
    assert Dataset.objects.get(name="promoted").procedures.count() == 6


def test_an_orphaned_promotion_is_resumed_by_the_scan(enqueued):
    batch, run = _asked()
    stale = timezone.now() - timedelta(hours=1)
    MiningPromotion.objects.filter(pk=run.pk).update(
        status="running", lease_owner="dead", heartbeat_at=stale
    )
    assert f"mining.MiningPromotion:{run.pk}" in engine.resume_orphans()
    assert enqueued[-1] == run.pk
    assert promotion.batch_promote_work(batch_id=batch.pk)["status"] == "done"


def test_a_refused_promotion_fails_with_its_reason(enqueued):
    batch, _ = _asked(name="taken")
    Dataset.objects.create(name="taken", version="v1")
    state = promotion.batch_promote_work(batch_id=batch.pk)
    assert state["status"] == "failed" and "already exists" in state["error"]
    # a failed promotion may be asked again (a new run), a running one may not
    Dataset.objects.filter(name="taken").delete()
    promotion.batch_promote_request(batch=batch, dataset_name="other")
    assert MiningPromotion.objects.filter(batch=batch).count() == 2
    assert promotion.promotion_state(batch)["dataset"] == "other@v1"
