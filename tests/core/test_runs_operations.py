"""Operations on several machines: health endpoints for web and workers (JSON, 200 or 503),
the worker beacon of a real worker process, and Celery beat resuming an orphaned run (a run
whose worker died while no worker was starting)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.celery import app, visibility_timeout
from core import health
from judging.models import JudgeRun, Judgment
from judging.services import runs as services
from tests.judging.factories import make_data, make_judge
from tests.judging.support import judge_responder
from tests.support.llm_fixtures import llm_server  # noqa: F401
from tests.support.worker import (
    ROOT,
    database_url_for_current_connection,
    running_worker,
    wait_for,
)

# --- web readiness ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_ready_is_200_with_database_and_broker_checked(client):
    response = client.get("/healthz/ready")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["checks"]["database"]["ok"] and body["checks"]["broker"]["ok"]
    assert body["checks"]["broker"]["kind"] == "redis"
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]


@pytest.mark.django_db
def test_ready_is_503_naming_the_broker_when_redis_is_unreachable(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["ok"] is False and body["checks"]["database"]["ok"] is True
    assert body["checks"]["broker"]["ok"] is False
    assert "Connection" in body["checks"]["broker"]["error"]


@pytest.mark.django_db
def test_health_endpoints_refuse_writes(client):
    assert client.post("/healthz/ready").status_code == 405
    assert client.post("/healthz/workers").status_code == 405


# --- workers ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_workers_is_503_without_a_live_beacon_and_200_with_one(client, monkeypatch):
    monkeypatch.setattr(health, "PREFIX", f"how2review:test-{timezone.now().timestamp()}:")
    assert client.get("/healthz/workers").status_code == 503
    health.beacon_write(name="w1@box", queues=["default", "gpu"])
    body = client.get("/healthz/workers?queue=gpu").json()
    assert body == {
        "ok": True,
        "workers": 1,
        "queues": {"default": 1, "gpu": 1},
        "oldest_beat_s": body["oldest_beat_s"],
        "queue": "gpu",
    }
    assert "w1@box" not in str(body)  # names stay private: the endpoint is public
    assert client.get("/healthz/workers?queue=cpu-only").status_code == 503
    health.beacon_clear(name="w1@box")
    assert client.get("/healthz/workers").status_code == 503


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_keeps_its_beacon_while_it_runs(client, tmp_path):
    with running_worker(tmp_path, concurrency=1) as worker:
        url = f"/healthz/workers?queue={worker.queue}"
        wait_for(lambda: client.get(url).status_code == 200, timeout=30, message="beacon")
        assert client.get(url).json()["queues"][worker.queue] == 1
    # a clean shutdown removes the beacon at once (a killed worker's expires)
    assert client.get(url).status_code == 503


# --- broker settings and beat -------------------------------------------------------------------


def test_visibility_timeout_is_set_above_the_longest_chunk(monkeypatch):
    monkeypatch.delenv("CELERY_VISIBILITY_TIMEOUT", raising=False)
    monkeypatch.setenv("RUN_CHUNK_SECONDS", "300")
    monkeypatch.setenv("RUN_LEASE_SECONDS", "60")
    assert visibility_timeout() == 660
    monkeypatch.setenv("CELERY_VISIBILITY_TIMEOUT", "7200")
    assert visibility_timeout() == 7200
    assert app.conf.broker_transport_options["visibility_timeout"] > 300
    schedule = app.conf.beat_schedule["resume-orphaned-runs"]
    assert schedule["task"] == "core.runs_resume_orphans"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_beat_resumes_a_run_whose_worker_died(llm_server, tmp_path):  # noqa: F811
    llm_server.responder = judge_responder
    data = make_data(n=12)
    judge = make_judge(name="orphan-judge", base_url=llm_server.base_url)
    env = {"RUN_LEASE_SECONDS": "5", "RUN_ORPHAN_SCAN_SECONDS": "1"}
    with running_worker(tmp_path, concurrency=1, extra_env=env) as worker:
        wait_for(
            lambda: "runs_resume_orphans" in worker.log() and "succeeded" in worker.log(),
            timeout=30,
            message="the worker's own resume at start",
        )
        # the worker has started (its own resume at start found nothing); now a run is
        # orphaned: "running", held by an execution whose heartbeat is long gone
        with transaction.atomic():
            run = services.judge_run_create(
                judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
            )
            JudgeRun.objects.filter(pk=run.pk).update(
                status="running",
                lease_owner="dead-worker",
                heartbeat_at=timezone.now() - timedelta(minutes=10),
            )
        beat = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "-s",
                str(tmp_path / "beat-schedule"),
                "--loglevel",
                "INFO",
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "DATABASE_URL": database_url_for_current_connection(),
                "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
                "CELERY_DEFAULT_QUEUE": worker.queue,  # the task goes to the test's worker
                "DJANGO_SETTINGS_MODULE": "config.settings",
                **env,
            },
            stdout=open(tmp_path / "beat.log", "wb"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(
                lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
                timeout=60,
                message=f"beat to resume the run; beat log:\n"
                f"{(tmp_path / 'beat.log').read_text(errors='replace')[-2000:]}",
            )
        finally:
            beat.terminate()
            beat.wait(timeout=15)
    assert Judgment.objects.count() == 12
    assert "Sending due task resume-orphaned-runs" in (tmp_path / "beat.log").read_text()
    assert "runs_resume_orphans" in worker.log()
