"""vLLM offline runs for real: a Celery worker consuming the gpu queue (concurrency 1) holds the
engine on the tiny model; judge runs, a generation run and a mining batch are routed to it by
the one routing rule. One worker serves the whole module, so its engine and its memory are
observed across runs: reuse, a swap that frees memory, a load failure that fails only its run,
cancel and resume."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client

from benchmarks.models import Generation, GenerationRun, Generator
from benchmarks.services import generation_runs as gen_services
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import judges as judge_services
from judging.services import runs as services
from mining.models import MiningBatch, MiningDocument
from mining.services import batches as mining_services
from tests.benchmarks.llm.vllm_support import (
    BOUNDED,
    TINY_ENGINE,
    gpu_queue_name,
    require_vllm,
    worker_child_rss,
    worker_env,
)
from tests.judging.factories import make_data
from tests.mining.factories import doc
from tests.support.worker import start_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

FINISHED = ("done", "failed", "cancelled")


@pytest.fixture(scope="module")
def gpu_worker(tiny_model_dir, django_db_setup, django_db_blocker, tmp_path_factory):
    """One worker on a gpu queue of its own for the module (concurrency 1, prefork)."""
    from django.conf import settings

    from config.celery import app

    require_vllm()
    queue = gpu_queue_name()
    previous = (settings.CELERY_GPU_QUEUE, app.conf.task_default_queue)
    settings.CELERY_GPU_QUEUE = queue  # queue_for() in this process routes there
    tmp = tmp_path_factory.mktemp("gpu-worker")
    env = worker_env(queue, H2R_JUDGE_CHUNK_ITEMS="8", HOW2REVIEW_VAR_DIR=str(tmp))
    with django_db_blocker.unblock():
        worker = start_worker(tmp, queue=queue, concurrency=1, extra_env=env)
    worker.tmp = tmp
    app.conf.task_default_queue = "nobody-listens-here"  # only the gpu queue is served
    yield worker
    worker.stop()
    settings.CELERY_GPU_QUEUE, app.conf.task_default_queue = previous


def _judge(name, model_dir, **decoding):
    return judge_services.judge_create(
        name=name,
        backend="vllm",
        model=str(model_dir),
        endpoint="chat",
        concurrency=1,
        decoding={**TINY_ENGINE, **BOUNDED, **decoding},
        price_input_per_mtok=1,
        price_output_per_mtok=2,
    )


def _launch(judge, dataset) -> JudgeRun:
    with transaction.atomic():
        return services.judge_run_create(judge=judge, selection={"dataset": dataset.pk})


def _finish(run, worker, timeout=240) -> JudgeRun:
    wait_for(
        lambda: JudgeRun.objects.get(pk=run.pk).status in FINISHED,
        timeout=timeout,
        message=f"run {run.pk} to finish; worker log:\n{worker.log()[-3000:]}",
    )
    run.refresh_from_db()
    return run


def test_judge_run_on_the_gpu_worker_stores_every_judgment_then_reuses_them(
    gpu_worker, tiny_model_dir, make_user
):
    data = make_data(n=10, dataset="vllm-a")
    judge = _judge("tiny-guided", tiny_model_dir)
    before = gpu_worker.log().count("loaded the vLLM engine")  # the module's earlier tests' loads
    run = _finish(_launch(judge, data["dataset"]), gpu_worker)
    loads = gpu_worker.log().count("loaded the vLLM engine")
    assert loads <= before + 1  # this engine, unless an earlier test left it loaded
    assert (run.status, run.n_done, run.n_total, run.n_failed) == ("done", 10, 10, 0), run.error
    judgments = list(Judgment.objects.filter(judge=judge))
    assert len(judgments) == 10 and run.n_parse_failed == 0
    for j in judgments:  # guided decoding: schema-valid JSON from random weights
        assert set(json.loads(j.raw_output)) == {"reasoning", "critical_failures"}
        assert j.prompt_tokens > 1000 and j.completion_tokens > 0
    assert run.prompt_tokens == sum(j.prompt_tokens for j in judgments)
    assert run.completion_tokens == sum(j.completion_tokens for j in judgments)
    assert run.cost > 0 and run.started_at and run.finished_at

    admin = make_user("vllm-admin", role="admin")
    client = Client()
    client.force_login(admin)
    body = client.get(f"/api/judge-runs/{run.pk}/").json()
    assert body["status"] == "done" and body["progress"]["fraction"] == 1.0

    again = _finish(_launch(judge, data["dataset"]), gpu_worker)
    assert (again.status, again.n_reused, again.prompt_tokens) == ("done", 10, 0)
    assert Judgment.objects.filter(judge=judge).count() == 10
    assert gpu_worker.log().count("loaded the vLLM engine") == loads  # one engine, held


def test_without_structured_output_parse_failures_are_recorded(gpu_worker, tiny_model_dir):
    data = make_data(n=6, dataset="vllm-b")
    judge = judge_services.judge_create(
        name="tiny-free",
        backend="vllm",
        model=str(tiny_model_dir),
        structured_output=False,
        decoding={**TINY_ENGINE, "max_tokens": 24},
    )
    run = _finish(_launch(judge, data["dataset"]), gpu_worker)
    assert (run.status, run.n_done, run.n_parse_failed) == ("done", 6, 6), run.error
    assert all(j.parse_error and j.raw_output for j in Judgment.objects.filter(judge=judge))


def test_generation_run_and_mining_stage_on_vllm_offline(gpu_worker, tiny_model_dir, settings):
    settings.MEDIA_ROOT = gpu_worker.tmp / "media"  # the worker's (HOW2REVIEW_VAR_DIR/media)
    data = make_data(n=4, dataset="vllm-gen", generators=())
    generator = Generator.objects.create(name="tiny-gen")
    before = gpu_worker.log().count("loaded the vLLM engine")  # the module's earlier tests' loads
    with transaction.atomic():
        gen_run = gen_services.generation_run_create(
            generator=generator,
            dataset=data["dataset"],
            variant="instruct",
            model=str(tiny_model_dir),
            backend="vllm",
            decoding={"max_tokens": 32},
            backend_options=dict(TINY_ENGINE),
            concurrency=1,
        )
    wait_for(
        lambda: GenerationRun.objects.get(pk=gen_run.pk).status in FINISHED,
        timeout=180,
        message=f"generation run; log:\n{gpu_worker.log()[-3000:]}",
    )
    gen_run.refresh_from_db()
    assert gen_run.status == "done", gen_run.error
    stored = Generation.objects.filter(generator=generator)
    assert stored.count() == 4 and all(g.model_completion for g in stored)
    loads = gpu_worker.log().count("loaded the vLLM engine")
    assert loads <= before + 1  # the judges' engine, unless an earlier test left it loaded

    upload = SimpleUploadedFile(
        "docs.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(5)).encode()
    )
    stage = {"backend": "vllm", "model": str(tiny_model_dir), **TINY_ENGINE}
    with transaction.atomic():
        batch = mining_services.batch_create(
            name="tiny-mine",
            upload=upload,
            stages=[1, 2],
            backends={"procedures": stage},
            options={"chunk_size": 5, "max_tokens": 48},
        )
    wait_for(
        lambda: MiningBatch.objects.get(pk=batch.pk).status in FINISHED,
        timeout=180,
        message=f"mining batch; log:\n{gpu_worker.log()[-3000:]}",
    )
    batch.refresh_from_db()
    assert batch.status == "done", batch.error
    assert MiningDocument.objects.filter(batch=batch).exclude(outcome="pending").count() == 5
    assert batch.prompt_tokens > 0 and batch.completion_tokens > 0
    # same model and engine options as the judges: still the one engine
    assert gpu_worker.log().count("loaded the vLLM engine") == loads


def test_engine_swap_frees_memory_and_a_too_long_prompt_is_marked(gpu_worker, tiny_model_dir):
    data = make_data(n=4, dataset="vllm-c")
    warm = _finish(_launch(_judge("tiny-warm", tiny_model_dir), data["dataset"]), gpu_worker)
    assert warm.status == "done", warm.error
    with_one_engine = worker_child_rss(gpu_worker)

    long = make_data(n=1, dataset="vllm-long", generators=("gen-long",))
    proc = long["procedures"][0]
    proc.goal = "Bake bread for the whole village today. " * 600  # > 4096 tokens
    proc.save(update_fields=["goal"])
    small = _judge("tiny-4k", tiny_model_dir, vllm_max_model_len=4096)  # another engine
    with transaction.atomic():
        run = services.judge_run_create(
            judge=small,
            selection={"generation_ids": [g.pk for g in data["generations"] + long["generations"]]},
        )
    run = _finish(run, gpu_worker)
    log = gpu_worker.log()
    assert log.count("closed the vLLM engine") >= 1 and log.count("loaded the vLLM engine") >= 2
    assert (run.n_done, run.n_total) == (4, 5)  # the run went on past the long item
    item = JudgeRunItem.objects.get(run=run, judgment__isnull=True)
    assert "prompt too long" in item.error and "max_model_len is 4096" in item.error
    assert run.status == "failed" and "prompt too long" in run.error
    after_swap = worker_child_rss(gpu_worker)
    print(
        f"worker RSS: one engine {with_one_engine / 2**20:.0f} MiB, after the swap "
        f"{after_swap / 2**20:.0f} MiB"
    )
    # the first engine was freed before the second was loaded: one engine's worth, not two
    assert after_swap < with_one_engine + 300 * 2**20, (with_one_engine, after_swap)


def test_a_load_failure_fails_its_run_with_the_reason_and_the_worker_goes_on(
    gpu_worker, tiny_model_dir, make_user
):
    data = make_data(n=3, dataset="vllm-d")
    missing = judge_services.judge_create(
        name="how2judge-missing",
        backend="vllm",
        model="/nonexistent/models/how2judge",
        decoding=dict(TINY_ENGINE),
    )
    bad = _judge("tiny-bad-len", tiny_model_dir, vllm_max_model_len=100_000)
    for judge, reason in ((missing, "model directory not found"), (bad, "could not load")):
        run = _finish(_launch(judge, data["dataset"]), gpu_worker)
        assert run.status == "failed" and reason in run.error, run.error
        assert "EngineLoadError" in run.error
    admin = make_user("vllm-admin2", role="admin")
    client = Client()
    client.force_login(admin)
    api = client.get(f"/api/judge-runs/{run.pk}/").json()
    assert api["status"] == "failed" and "could not load" in api["error"]
    page = client.get(f"/admin/judging/judgerun/{run.pk}/change/").content.decode()
    assert "could not load" in page

    good = _finish(_launch(_judge("tiny-after", tiny_model_dir), data["dataset"]), gpu_worker)
    assert (good.status, good.n_done) == ("done", 3), good.error


def test_cancel_then_resume_on_the_gpu_worker(gpu_worker, tiny_model_dir):
    data = make_data(n=32, dataset="vllm-e")
    judge = judge_services.judge_create(
        name="tiny-slow",
        backend="vllm",
        model=str(tiny_model_dir),
        structured_output=False,
        decoding={**TINY_ENGINE, "max_tokens": 120},
    )
    run = _launch(judge, data["dataset"])
    wait_for(
        lambda: JudgeRun.objects.get(pk=run.pk).n_done >= 8,
        timeout=180,
        message=f"first chunk; log:\n{gpu_worker.log()[-3000:]}",
    )
    services.judge_run_cancel(run=JudgeRun.objects.get(pk=run.pk))
    run = _finish(run, gpu_worker)
    assert run.status == "cancelled" and 8 <= run.n_done < 32
    services.judge_run_resume(run=run)
    run = _finish(run, gpu_worker)
    assert (run.status, run.n_done) == ("done", 32), run.error
    assert Judgment.objects.filter(judge=judge).count() == 32
