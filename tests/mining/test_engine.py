"""A mining batch is a run of the run engine: the upload is read on the first execution, each
chunk task works pending documents (at most ``chunk_size`` at once) until none is left or its time
is up, storing each reply as it comes; counters come from rows, a
lost lease stores nothing, a cancel stops sending and keeps what was answered, routing follows
the backends."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Sum
from django.test import Client
from django.utils import timezone

from benchmarks.llm.base import LLMBackend
from core.runs import engine
from core.runs.engine import Lease
from mining.models import MiningBatch, MiningDocument, MiningStageUsage
from mining.services import batches as services
from mining.services import execution
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db(transaction=True)

LABEL = "mining.MiningBatch"


def _batch(mining_backends, n=12, chunk=5, start=False) -> MiningBatch:
    upload = SimpleUploadedFile(
        "d.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(n)).encode()
    )
    return services.batch_create(
        name="e",
        upload=upload,
        backends=mining_backends,
        options={"chunk_size": chunk},
        start=start,
    )


def _pending(batch) -> int:
    return MiningDocument.objects.filter(batch=batch, outcome="pending").count()


def test_chunks_ingest_first_then_work_until_done_or_their_time_is_up(
    media_root, settings, llm_server, mining_backends, script
):
    llm_server.latency_s = 0.05
    settings.RUN_CHUNK_SECONDS = 0  # every chunk is due at its first beat
    batch = _batch(mining_backends, n=12, chunk=5)
    assert (batch.status, batch.ingested, batch.n_total) == ("queued", False, 0)

    assert engine.execute(LABEL, batch.pk, chain=False).status == "more"
    batch.refresh_from_db()
    assert batch.status == "running" and batch.ingested and batch.started_at is not None
    assert batch.n_total == 12 and batch.n_done < 12 and _pending(batch) == 12 - batch.n_done
    assert batch.lease_owner == ""  # released between chunks: any worker may take the next
    assert 0 < sum(script.requests.values()) < 5 * 12  # stopped sending when its time was up

    settings.RUN_CHUNK_SECONDS = 300
    assert engine.execute(LABEL, batch.pk, chain=False).status == "done"
    batch.refresh_from_db()
    assert (batch.status, batch.n_done, batch.n_failed, batch.progress_percent) == (
        "done",
        12,
        0,
        100,
    )
    assert batch.finished_at is not None and batch.lease_owner == ""
    # what the first chunk had answered (documents mid-way included) was not asked again
    assert sum(script.requests.values()) == 5 * 12 and max(script.requests.values()) == 1
    # tokens and cost are the sums of the stage usage rows
    usage = MiningStageUsage.objects.filter(batch=batch).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens"), cost=Sum("cost_usd"), n=Sum("requests")
    )
    assert usage["n"] == 5 * 12
    assert batch.prompt_tokens == usage["p"] > 12_000  # 1000 per extraction request
    assert batch.completion_tokens == usage["c"]
    assert batch.cost == usage["cost"] > Decimal(0)


def test_error_documents_count_as_done_not_failed(media_root, mining_backends, script):
    upload = SimpleUploadedFile(
        "d.jsonl",
        "".join(json.dumps(doc(i, "BADJSON" if i < 2 else "")) + "\n" for i in range(4)).encode(),
    )
    batch = services.batch_create(name="e", upload=upload, backends=mining_backends, start=False)
    batch = services.batch_run(batch_id=batch.pk)
    assert MiningDocument.objects.filter(batch=batch, outcome="error").count() == 2
    assert (batch.status, batch.n_total, batch.n_done, batch.n_failed) == ("done", 4, 4, 0)
    assert batch.progress_percent == 100


def test_chunks_go_to_the_gpu_queue_when_a_stage_runs_on_vllm_offline(
    media_root, settings, mining_backends
):
    vllm = {"backend": "vllm", "model": "tiny-random"}
    with mock.patch("core.tasks.run_chunk.apply_async") as send:
        on_cpu = _batch(mining_backends, start=True)
        on_gpu = _batch({**mining_backends, "filter": vllm}, start=True)
    sent = {call.args[0][1]: call.kwargs["queue"] for call in send.call_args_list}
    assert sent == {on_cpu.pk: None, on_gpu.pk: settings.CELERY_GPU_QUEUE}
    assert all(call.args[0][0] == LABEL for call in send.call_args_list)


def test_a_lost_lease_stops_sending_and_stores_nothing(
    media_root, monkeypatch, llm_server, mining_backends, script
):
    llm_server.latency_s = 0.05
    batch = _batch(mining_backends, n=40, chunk=40)
    services.batch_ingest(batch=batch)
    # Another execution holds the batch: our token is not the lease owner.
    MiningBatch.objects.filter(pk=batch.pk).update(
        status="running", lease_owner="other", heartbeat_at=timezone.now()
    )
    batch.refresh_from_db()
    executor = engine.executor_for(MiningBatch)
    assert executor.work_chunk(batch, Lease(MiningBatch, batch.pk, "mine")) is True
    assert _pending(batch) == 40
    assert not MiningStageUsage.objects.filter(batch=batch).exists()
    assert sum(script.by_goal.values()) < 40  # stopped sending once the lease was lost
    assert MiningBatch.objects.get(pk=batch.pk).lease_owner == "other"


def test_a_live_lease_is_left_alone_and_a_stale_one_taken_over(
    media_root, settings, mining_backends, script
):
    batch = _batch(mining_backends, n=6, chunk=10)
    MiningBatch.objects.filter(pk=batch.pk).update(
        status="running", lease_owner="gone-worker", heartbeat_at=timezone.now()
    )
    busy = engine.execute(LABEL, batch.pk, chain=False)
    assert busy.status == "busy" and 0 < busy.retry_in_s <= settings.RUN_LEASE_SECONDS + 1
    assert sum(script.by_goal.values()) == 0
    stale = timezone.now() - timedelta(seconds=settings.RUN_LEASE_SECONDS + 1)
    MiningBatch.objects.filter(pk=batch.pk).update(heartbeat_at=stale)
    assert MiningBatch.objects.get(pk=batch.pk).worker_gone
    assert engine.execute(LABEL, batch.pk, chain=False).status == "done"
    batch.refresh_from_db()
    assert (batch.status, batch.n_done) == ("done", 6)


class _CancelOnFirstReply(LLMBackend):
    """Asks the engine to cancel the batch when the first reply of the chunk comes back: one
    document has an answer to keep, the others are in flight or not sent yet."""

    def __init__(self, inner: LLMBackend, batch: MiningBatch) -> None:
        super().__init__(inner.config)
        self.inner, self.batch = inner, batch

    def complete_iter(self, requests, *, should_stop=None):
        for reply in self.inner.complete_iter(requests, should_stop=should_stop):
            if MiningBatch.objects.get(pk=self.batch.pk).status == "running":
                engine.cancel(self.batch)
            yield reply


def test_cancel_during_a_chunk_stops_sending_and_keeps_what_was_answered(
    media_root, monkeypatch, llm_server, mining_backends, script
):
    llm_server.latency_s = 0.2
    # 2 request slots: the chunk holds max(5, 2 x 2) = 5 documents open
    batch = _batch({"default": {**mining_backends["default"], "concurrency": 2}}, n=12, chunk=5)
    real = execution.stage_backends
    monkeypatch.setattr(
        execution,
        "stage_backends",
        lambda b: {k: _CancelOnFirstReply(v, b) for k, v in real(b).items()},
    )
    batch = services.batch_run(batch_id=batch.pk)
    assert batch.status == "cancelled" and batch.finished_at is not None
    started = script.calls["procedures"]
    # the feed looks at the batch itself between requests (at most 50 ms apart, not at the
    # writer's next beat): the 2 in flight when the first reply came back, and at most one more
    # per slot freed before that look (a reply takes 0.2 s); the rest of the window never starts
    assert 1 <= started <= 4
    assert sum(script.requests.values()) < 5 * 5  # stopped sending mid-chunk
    stored = MiningDocument.objects.filter(batch=batch, outcome="pending", last_passed_stage__gt=0)
    assert stored.count() == started and batch.n_done == 0  # every reply kept, mid-way
    assert all("procedures" in d.trace for d in stored)
    monkeypatch.setattr(execution, "stage_backends", real)
    batch = services.batch_resume(batch=batch)
    assert batch.status == "queued"
    batch = services.batch_run(batch_id=batch.pk)
    assert (batch.status, batch.n_done) == ("done", 12)
    assert MiningDocument.objects.filter(batch=batch, outcome="kept").count() == 12
    # what was answered before the cancel was never asked again
    assert max(script.requests.values()) == 1 and sum(script.requests.values()) == 5 * 12


def test_a_chunk_that_raises_fails_the_batch_with_the_reason(media_root, mining_backends):
    batch = _batch(mining_backends)
    batch.source_file.storage.delete(batch.source_file.name)
    batch = services.batch_run(batch_id=batch.pk)
    assert batch.status == "failed" and "FileNotFoundError" in batch.error
    assert batch.lease_owner == "" and not batch.ingested


def test_take_over_is_offered_only_when_the_worker_is_gone(
    make_user, media_root, settings, mining_backends
):
    batch = _batch(mining_backends)
    web = Client()
    web.force_login(make_user("adm", role="admin"))
    url = f"/mining/batches/{batch.pk}/live/"
    MiningBatch.objects.filter(pk=batch.pk).update(
        status="running", lease_owner="w", heartbeat_at=timezone.now()
    )
    html = web.get(url).content.decode()
    assert "Take over" not in html and "Cancel batch" in html and "Running" in html
    refused = web.post(f"/mining/batches/{batch.pk}/resume/", {"force": ""}, follow=True)
    assert "use force to take it over" in refused.content.decode()

    stale = timezone.now() - timedelta(seconds=settings.RUN_LEASE_SECONDS + 5)
    MiningBatch.objects.filter(pk=batch.pk).update(heartbeat_at=stale)
    html = web.get(url).content.decode()
    assert "Take over (worker gone)" in html and 'id="batch-worker-gone"' in html
    with mock.patch("core.tasks.run_chunk.apply_async") as send:
        web.post(f"/mining/batches/{batch.pk}/resume/", {"force": "1"})
    batch.refresh_from_db()
    assert (batch.status, batch.lease_owner, batch.heartbeat_at) == ("queued", "", None)
    assert send.call_count == 1

    MiningBatch.objects.filter(pk=batch.pk).update(status="cancelling", lease_owner="w")
    html = web.get(url).content.decode()  # nobody beats: cancel is offered, take over is not
    assert "Cancelling" in html and "Take over" not in html and "Cancel batch" in html
    web.post(f"/mining/batches/{batch.pk}/cancel/")
    assert MiningBatch.objects.get(pk=batch.pk).status == "cancelled"


def test_api_shows_the_run_fields(make_user, media_root, mining_backends):
    from rest_framework.test import APIClient

    batch = _batch(mining_backends)
    api = APIClient()
    api.force_authenticate(make_user("res", role="researcher"))
    body = api.get(f"/api/mining/batches/{batch.pk}/").json()
    assert body["status"] == "queued" and body["worker_gone"] is False
    assert {"n_total", "n_done", "n_failed", "prompt_tokens", "cost", "heartbeat_at"} <= set(body)
    assert "cancel_requested" not in body and "n_documents" not in body
