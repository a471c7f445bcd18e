"""A gpu worker holding a vLLM engine is killed (SIGKILL) mid-run: a new worker resumes the run
with no judgment lost or made twice; stopped gracefully, a worker closes its engine."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import transaction

from config.celery import app
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import judges as judge_services
from judging.services import runs as services
from tests.benchmarks.llm.vllm_support import TINY_ENGINE, gpu_queue_name, require_vllm, worker_env
from tests.judging.factories import make_data
from tests.support.worker import start_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 24


def test_sigkilled_gpu_worker_run_resumes_exactly_and_shutdown_closes_the_engine(
    tiny_model_dir, tmp_path, monkeypatch
):
    require_vllm()
    queue = gpu_queue_name()
    monkeypatch.setattr(settings, "CELERY_GPU_QUEUE", queue)
    previous_default = app.conf.task_default_queue  # start_worker points it at the worker
    env = worker_env(queue, RUN_LEASE_SECONDS="3", H2R_JUDGE_CHUNK_ITEMS="8")
    data = make_data(n=N, dataset="vllm-kill")
    judge = judge_services.judge_create(
        name="tiny-kill",
        backend="vllm",
        model=str(tiny_model_dir),
        structured_output=False,
        decoding={**TINY_ENGINE, "max_tokens": 96},
    )
    first = start_worker(tmp_path, queue=queue, concurrency=1, extra_env=env)
    try:
        with transaction.atomic():
            run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
        wait_for(
            lambda: Judgment.objects.count() >= 8,
            timeout=180,
            message=f"first judgments; log:\n{first.log()[-3000:]}",
        )
    finally:
        first.kill()  # SIGKILL: no shutdown signal, the engine dies with the process
    assert "closed the vLLM engine" not in first.log()
    at_kill = Judgment.objects.count()
    run.refresh_from_db()
    assert run.status == "running" and at_kill < N

    second = start_worker(tmp_path, queue=queue, concurrency=1, extra_env=env)
    try:
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
            timeout=240,
            message=f"resumed run to finish; log:\n{second.log()[-3000:]}",
        )
    finally:
        second.stop()  # warm shutdown: the pool process closes its engine
        app.conf.task_default_queue = previous_default
    run.refresh_from_db()
    assert (run.n_done, run.n_failed, run.n_total) == (N, 0, N)
    assert Judgment.objects.filter(judge=judge).count() == N  # none lost, none twice
    assert JudgeRunItem.objects.filter(run=run).values("judgment").distinct().count() == N
    log = second.log()
    assert "loaded the vLLM engine" in log and "closed the vLLM engine" in log, log[-3000:]
