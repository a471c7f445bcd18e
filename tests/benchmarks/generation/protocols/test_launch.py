"""A protocol run launched each way: the run_generation command, the generation-runs API (admins
only; unknown options a 400) and a real Celery worker."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from benchmarks.models import Generation, GenerationRun, Generator
from tests.benchmarks.generation.protocols.support import (
    CONVERTED,
    COUNTDOWN_ITEMS,
    countdown_responder,
    imported,
    procbench_items,
    procbench_responder,
    procbench_run,
)
from tests.support.worker import running_worker, wait_for

pytestmark = pytest.mark.django_db


def test_run_generation_command_takes_a_protocol(llm_server):
    llm_server.responder = countdown_responder
    imported("longproc-countdown", COUNTDOWN_ITEMS[:1], "cd")
    out = io.StringIO()
    call_command(
        "run_generation",
        "--generator",
        "g-cmd",
        "--dataset",
        "cd",
        "--model",
        "m",
        "--base-url",
        llm_server.base_url,
        "--protocol",
        "longproc-countdown",
        "--protocol-options",
        '{"buffer": 100}',
        "--inline",
        stdout=out,
    )
    assert "protocol longproc-countdown" in out.getvalue()
    assert llm_server.requests[0].body["max_tokens"] == 600
    with pytest.raises(CommandError, match="--protocol-options: not JSON"):
        call_command(
            "run_generation",
            "--generator",
            "g2",
            "--dataset",
            "cd",
            "--protocol",
            "procbench",
            "--protocol-options",
            "{nope",
        )


def test_api_admin_launches_with_a_protocol_and_bad_options_are_400(llm_server, make_user, client):
    dataset = imported("longproc-countdown", COUNTDOWN_ITEMS[:1], "cd")
    boss, reader = make_user("boss", role="admin"), make_user("reader", role="researcher")
    body = {
        "generator": "api-gen",
        "dataset": dataset.pk,
        "model": "m",
        "base_url": llm_server.base_url,
        "protocol": "longproc-countdown",
    }
    client.force_login(reader)
    assert (
        client.post("/api/generation-runs/", body, content_type="application/json").status_code
        == 403
    )
    client.force_login(boss)
    bad = client.post(
        "/api/generation-runs/",
        {**body, "protocol_options": {"levle": "2k"}},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert "unknown option(s) levle" in bad.json()["protocol_options"][0]
    made = client.post("/api/generation-runs/", body, content_type="application/json")
    assert made.status_code == 201, made.content
    assert made.json()["protocol"] == "longproc-countdown"
    assert made.json()["protocol_options"]["buffer"] == 1000
    run_id = made.json()["id"]
    listed = client.get("/api/generation-runs/?protocol=longproc-countdown").json()
    assert [r["id"] for r in listed["results"]] == [run_id]
    assert client.post(f"/api/generation-runs/{run_id}/cancel/").json()["status"] == "cancelled"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_a_procbench_protocol_run_with_its_conversion(llm_server, tmp_path):
    llm_server.responder = procbench_responder
    dataset = imported("procbench", procbench_items(), "pb")
    generator = Generator.objects.create(name="worker-pb")
    with running_worker(tmp_path, concurrency=1) as worker:
        with transaction.atomic():
            run = procbench_run(llm_server, dataset, generator)
        wait_for(
            lambda: not GenerationRun.objects.get(pk=run.pk).is_active,
            timeout=90,
            message=f"run done; log:\n{worker.log()[-2000:]}",
        )
    run.refresh_from_db()
    assert (run.status, run.n_done, run.n_failed) == ("done", 3, 0)
    converted = dict(
        Generation.objects.filter(run=run).values_list(
            "procedure__source_example_id", "payload__prediction"
        )
    )
    assert converted == {"dc-1": CONVERTED["1"], "dc-2": CONVERTED["2"], "dc-3": None}
