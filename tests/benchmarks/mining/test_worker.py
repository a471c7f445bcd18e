"""A real Celery worker runs the batch; killing it mid-batch and resuming loses and repeats
nothing already done; cancelling stops it after the current chunk."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.mining.models import MiningBatch, MiningDocument
from benchmarks.mining.services import batches as services
from tests.benchmarks.mining.conftest import doc
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 60
CHUNK = 10


def _batch(mining_backends):
    upload = SimpleUploadedFile(
        "d.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(N)).encode()
    )
    return services.batch_create(
        name="w", upload=upload, backends=mining_backends, options={"chunk_size": CHUNK}, start=True
    )


def _env(tmp_path):
    return {
        "HOW2REVIEW_VAR_DIR": str(tmp_path)
    }  # the worker's MEDIA_ROOT is the test's (tmp_path/media)


def _done(batch_id):
    return MiningBatch.objects.get(pk=batch_id).n_done


def test_worker_killed_mid_batch_then_resumed(
    tmp_path, media_root, llm_server, mining_backends, script
):
    llm_server.latency_s = 0.05
    with running_worker(tmp_path, concurrency=1, extra_env=_env(tmp_path)) as worker:
        batch = _batch(mining_backends)
        wait_for(lambda: _done(batch.pk) >= 2 * CHUNK, timeout=90, message="two chunks done")
        worker.kill()  # SIGKILL mid-chunk: no chance to clean up
        done_at_kill = _done(batch.pk)
        assert done_at_kill < N
        assert MiningBatch.objects.get(pk=batch.pk).status == "running"
    before = sum(script.by_goal.values())
    with running_worker(tmp_path, concurrency=1, extra_env=_env(tmp_path)):
        services.batch_resume(batch=MiningBatch.objects.get(pk=batch.pk), force=True)
        wait_for(
            lambda: MiningBatch.objects.get(pk=batch.pk).status == "done",
            timeout=120,
            message="batch done after resume",
        )
    batch.refresh_from_db()
    assert batch.n_done == N == MiningDocument.objects.filter(batch=batch, outcome="kept").count()
    # Documents finished before the kill were never sent again; at most the interrupted chunk was.
    repeated = [g for g, c in script.by_goal.items() if c > 1]
    assert len(repeated) <= CHUNK
    assert sum(script.by_goal.values()) - before <= N - done_at_kill + CHUNK


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
