"""A generation run in a real Celery worker (Redis broker, PostgreSQL): the worker is killed
mid-run, the run shows its worker gone once the lease goes stale, it is resumed in a fresh
worker, and every procedure ends with exactly one generation."""

from __future__ import annotations

import pytest
from django.db.models import Count

from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure
from benchmarks.services.generation_runs import generation_run_create, generation_run_start
from core.runs.reply_writer import unstored_width
from tests.benchmarks.generation.conftest import steps_responder
from tests.support.worker import running_worker, wait_for

N = 12


@pytest.mark.worker
def test_killed_worker_then_resume_leaves_no_duplicate_and_no_gap(
    celery_worker_process, llm_server, tmp_path, settings
):
    llm_server.responder = steps_responder
    llm_server.latency_s = 0.25
    dataset = Dataset.objects.create(name="worker-gen", version="v1")
    for i in range(N):
        Procedure.objects.create(
            dataset=dataset,
            source_example_id=f"w-{i}",
            goal=f"Goal number {i}",
            resources=["a"],
            steps=["one.", "two."],
        )
    generator = Generator.objects.create(name="worker-gen")
    run = generation_run_create(
        generator=generator,
        dataset=dataset,
        model="test-model",
        base_url=llm_server.base_url,
        chunk_size=2,
        concurrency=1,
        backend_options={"timeout_s": 5, "max_retries": 1, "backoff_base_s": 0.01},
    )

    def done() -> int:
        return Generation.objects.filter(generator=generator).count()

    wait_for(lambda: done() >= 4, timeout=60, message="a few chunks in the first worker")
    celery_worker_process.kill()
    killed_at = done()
    run.refresh_from_db()
    assert run.status == "running" and killed_at < N, "the kill must land mid-run"

    # in this process a lease goes stale after 2 s: the console then shows the worker gone
    settings.RUN_LEASE_SECONDS = 2
    wait_for(
        lambda: GenerationRun.objects.get(pk=run.pk).worker_gone,
        timeout=30,
        message="the dead worker's lease to go stale",
    )
    with running_worker(tmp_path) as second:
        run = generation_run_start(run=run)  # resume: a new attempt in the new worker
        assert run.status == "queued"
        wait_for(
            lambda: not GenerationRun.objects.get(pk=run.pk).is_active,
            timeout=90,
            message=f"run to finish\n{second.log()[-3000:]}",
        )

    run.refresh_from_db()
    assert run.status == "done", run.error
    assert (run.n_done, run.n_failed, run.errors, run.lease_owner) == (N, 0, [], "")
    per_procedure = (
        Generation.objects.filter(generator=generator).values("procedure").annotate(c=Count("id"))
    )
    assert len(per_procedure) == N and {row["c"] for row in per_procedure} == {1}
    # each reply is stored as it arrives: only the request in flight at the kill (concurrency
    # 1) and a reply not yet committed are bought again (unstored_width(1) = 2)
    rebought = len(llm_server.requests) - N
    print(f"generation run: re-bought after kill -9: {rebought} (concurrency 1)")
    assert rebought <= unstored_width(1) == 2, rebought
    assert run.scores["n_examples"] == N and run.scores["step_format"] == 1.0
