"""A real Celery worker runs the batch; killing it mid-chunk and resuming loses nothing and
repeats at most the requests in flight; cancelling stops it mid-chunk, its progress kept."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Sum

from core.runs.reply_writer import unstored_width
from mining.models import MiningBatch, MiningDocument
from mining.services import batches as services
from tests.mining.factories import doc
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 60
CHUNK = 10


def _batch(mining_backends, chunk=CHUNK):
    upload = SimpleUploadedFile(
        "d.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(N)).encode()
    )
    return services.batch_create(
        name="w", upload=upload, backends=mining_backends, options={"chunk_size": chunk}, start=True
    )


def _env(tmp_path):
    return {
        "HOW2REVIEW_VAR_DIR": str(tmp_path)
    }  # the worker's MEDIA_ROOT is the test's (tmp_path/media)


def _done(batch_id):
    return MiningBatch.objects.get(pk=batch_id).n_done


def _stored_mid_way(batch_id) -> int:
    return MiningDocument.objects.filter(
        batch_id=batch_id, outcome="pending", last_passed_stage__gt=0
    ).count()


def test_worker_killed_mid_chunk_repeats_at_most_the_requests_in_flight(
    tmp_path, media_root, llm_server, mining_backends, script
):
    """Each reply is stored as it comes (the document's progress, mid-way included), and no
    more than the concurrency and half of it (8 + 4) are sent and not yet stored: a SIGKILL
    re-buys at most 12."""
    llm_server.latency_s = 0.1
    with running_worker(tmp_path, concurrency=1, extra_env=_env(tmp_path)) as worker:
        batch = _batch(mining_backends, chunk=N)  # one chunk: the kill lands inside it
        wait_for(
            lambda: _done(batch.pk) >= 5 and _stored_mid_way(batch.pk) >= 5,
            timeout=90,
            message="documents finished and others stored mid-way",
        )
        worker.kill()  # SIGKILL mid-chunk: no chance to clean up
        assert MiningBatch.objects.get(pk=batch.pk).status == "running"
    assert _done(batch.pk) < N
    sent_before = sum(script.requests.values())
    with running_worker(tmp_path, concurrency=1, extra_env=_env(tmp_path)):
        services.batch_resume(batch=MiningBatch.objects.get(pk=batch.pk), force=True)
        wait_for(
            lambda: MiningBatch.objects.get(pk=batch.pk).status == "done",
            timeout=120,
            message="batch done after resume",
        )
    batch.refresh_from_db()
    kept = MiningDocument.objects.filter(batch=batch, outcome="kept")
    assert batch.n_done == N == kept.count()
    assert all(len(d.trace) == 6 for d in kept)  # every stage recorded, across the two workers
    repeated = sum(n - 1 for n in script.requests.values() if n > 1)
    assert sum(script.requests.values()) > sent_before  # the second worker did send the rest
    assert 0 <= repeated <= unstored_width(mining_backends["default"]["concurrency"]) == 12
    assert sum(script.requests.values()) == 5 * N + repeated  # five LLM stages per document
    # the usage rows count the replies stored, with their documents: the ones the killed worker
    # lost are not in them, so each document's five stages are counted once
    assert batch.usage.aggregate(n=Sum("requests"))["n"] == 5 * N


def test_cancel_stops_a_running_batch(tmp_path, media_root, llm_server, mining_backends, script):
    llm_server.latency_s = 0.05
    with running_worker(tmp_path, concurrency=1, extra_env=_env(tmp_path)):
        batch = _batch(mining_backends)
        wait_for(lambda: _done(batch.pk) >= CHUNK, timeout=90, message="a chunk done")
        services.batch_cancel(batch=MiningBatch.objects.get(pk=batch.pk))
        wait_for(
            lambda: MiningBatch.objects.get(pk=batch.pk).status == "cancelled",
            timeout=60,
            message="batch cancelled",
        )
    batch.refresh_from_db()
    assert CHUNK <= batch.n_done < N
    assert MiningDocument.objects.filter(batch=batch, outcome="pending").count() == N - batch.n_done
