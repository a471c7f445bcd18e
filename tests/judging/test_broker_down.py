"""A launch whose task cannot be sent answers 503 naming the broker and leaves nothing
half-started; work already marked queued whose message the broker lost is picked up once the
broker is back (the orphan scan covers queued runs). The broker is a Redis server of the test's
own, stopped and started around the launches of each run type and of a mining promotion."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.models import Dataset, GenerationRun, Generator, ScoringRun
from benchmarks.services.generation_runs import generation_run_create
from benchmarks.services.scoring_runs import scoring_run_create
from core.runs.dispatch import BrokerUnavailable
from judging.models import JudgeRun
from mining.models import MiningBatch, MiningPromotion
from tests.core.factories import api_client
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import judge_responder
from tests.mining.factories import doc, done_batch
from tests.support.redis_server import OwnRedis, broker_at
from tests.support.worker import running_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def own_broker(settings):
    with OwnRedis() as server, broker_at(server.url, settings):
        yield server


def _refused(resp, server) -> None:
    assert resp.status_code == 503, resp.content
    detail = resp.json()["detail"]
    assert f"redis://127.0.0.1:{server.port}/0" in detail and "nothing was started" in detail


def test_launches_while_the_broker_is_down_answer_503_and_leave_nothing(
    own_broker, llm_server, make_user, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    data = make_data(n=4)
    judge = make_judge(name="j", base_url=llm_server.base_url, preset=FAIL_FAST)
    batch = done_batch()
    admin = api_client(make_user("adm", role="admin"))
    own_broker.stop()

    _refused(
        admin.post(
            "/api/judge-runs/",
            {"judge": judge.name, "selection": {"dataset": data["dataset"].pk}},
            format="json",
        ),
        own_broker,
    )
    assert JudgeRun.objects.count() == 0
    backends = {
        "default": {"backend": "openai", "base_url": llm_server.base_url, "model": "test-model"}
    }
    upload = SimpleUploadedFile("docs.jsonl", (json.dumps(doc(1)) + "\n").encode())
    _refused(
        admin.post(
            "/api/mining/batches/",
            {"file": upload, "stages": "1,2,3,4,5,6", "backends": json.dumps(backends)},
            format="multipart",
        ),
        own_broker,
    )
    assert MiningBatch.objects.filter(name="docs.jsonl").count() == 0
    promote = f"/api/mining/batches/{batch.pk}/promote/"
    _refused(admin.post(promote, {"dataset_name": "x", "per_topic": 2}, format="json"), own_broker)
    assert MiningPromotion.objects.count() == 0
    dataset = Dataset.objects.get(pk=data["dataset"].pk)
    generator = Generator.objects.create(name="g-down")
    with pytest.raises(BrokerUnavailable):
        generation_run_create(
            generator=generator, dataset=dataset, model="m", base_url=llm_server.base_url
        )
    assert GenerationRun.objects.count() == 0
    with pytest.raises(BrokerUnavailable):
        scoring_run_create(
            generator=data["generators"][0], dataset=dataset, pack="longproc-countdown"
        )
    assert ScoringRun.objects.count() == 0

    # back: the same launches go through (the promotion is not "already being promoted")
    own_broker.start()
    resp = admin.post(promote, {"dataset_name": "x", "per_topic": 2}, format="json")
    assert resp.status_code == 202, resp.content
    resp = admin.post(
        "/api/judge-runs/",
        {"judge": judge.name, "selection": {"dataset": data["dataset"].pk}},
        format="json",
    )
    assert resp.status_code == 201, resp.content


@pytest.mark.worker
def test_queued_work_whose_message_was_lost_is_picked_up_when_the_broker_is_back(
    own_broker, llm_server, make_user, tmp_path
):
    llm_server.responder = judge_responder
    data = make_data(n=6)
    judge = make_judge(name="j", base_url=llm_server.base_url, preset=FAIL_FAST)
    batch = done_batch()
    admin = api_client(make_user("adm", role="admin"))
    resp = admin.post(
        "/api/judge-runs/",
        {"judge": judge.name, "selection": {"dataset": data["dataset"].pk}},
        format="json",
    )
    assert resp.status_code == 201, resp.content
    run = JudgeRun.objects.get(pk=resp.json()["id"])
    resp = admin.post(
        f"/api/mining/batches/{batch.pk}/promote/",
        {"dataset_name": "lost", "per_topic": 2},
        format="json",
    )
    assert resp.status_code == 202, resp.content
    # the broker restarts empty: both messages are lost, both runs stay queued
    own_broker.stop()
    own_broker.start()
    time.sleep(1.2)
    env = {"RUN_QUEUED_RESEND_SECONDS": "1"}
    with running_worker(tmp_path, extra_env=env) as worker:
        wait_for(
            lambda: (
                JudgeRun.objects.get(pk=run.pk).status == "done"
                and MiningPromotion.objects.get(batch=batch).status == "done"
            ),
            timeout=90,
            message=f"the queued runs picked up\n{worker.log()[-3000:]}",
        )
    assert "queued" in worker.log()  # sent again by the orphan scan at the worker's start
    run.refresh_from_db()
    assert (run.n_done, run.n_total) == (6, 6)


def test_a_command_that_needs_a_worker_says_so_when_none_runs(llm_server, tmp_path, monkeypatch):
    from django.core.management import CommandError, call_command

    from config.celery import app

    # the configured default queue (a test that started a worker of its own may have left its
    # queue there: tests.support.worker.start_worker)
    monkeypatch.setattr(app.conf, "task_default_queue", "default")

    generations = tmp_path / "generations.jsonl"
    record = {
        "source_example_id": "ex-1",
        "topic": "Food & Dining",
        "goal": "Bake soda bread.",
        "steps": ["Mix.", "Bake."],
        "resources": [],
        "predicted_steps": ["Mix.", "Bake."],
    }
    generations.write_text(json.dumps(record) + "\n")
    config = tmp_path / "judge.yaml"
    config.write_text(
        f"out_root: {tmp_path / 'out'}\npaths:\n  generations: {generations}\n"
        f"evaluator:\n  backend: openai\n  base_url: {llm_server.base_url}\n  model: j\n"
    )
    with pytest.raises(CommandError) as refused:
        call_command("bench", "judge", "--config", str(config))
    message = str(refused.value)
    assert "no worker is working the queue 'default'" in message
    assert "make worker" in message and "--inline" in message
    assert JudgeRun.objects.get().status == "queued"  # left for a worker that starts later


def test_the_embedded_broker_makes_its_folders_on_first_use(settings, tmp_path):
    from core.runs import dispatch

    folders = {k: str(tmp_path / "broker" / k) for k in ("queue", "processed", "control")}
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": folders["queue"],
        "data_folder_out": folders["queue"],
        "processed_folder": folders["processed"],
        "control_folder": folders["control"],
    }
    dispatch.require_broker()
    assert all(Path(f).is_dir() for f in folders.values())
