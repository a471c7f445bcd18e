"""run_generation (inline, through the local test server) and generation_scores."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from benchmarks.models import Generation, GenerationRun, Generator
from tests.benchmarks.generation.conftest import steps_responder


def run_cmd(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.usefixtures("small_dataset")
def test_run_generation_inline_then_scores(llm_server):
    llm_server.responder = steps_responder
    out = run_cmd(
        "run_generation",
        "--generator",
        "cli-gen",
        "--dataset",
        "gen-test@v1",
        "--base-url",
        llm_server.base_url,
        "--model",
        "test-model",
        "--variant",
        "base",
        "--inline",
        "--chunk-size",
        "2",
        "--max-tokens",
        "256",
        "--backend-options",
        '{"timeout_s": 5, "max_retries": 1}',
    )
    assert "done — 5/5 generated, 0 failed" in out
    run = GenerationRun.objects.get(generator__name="cli-gen")
    assert run.decoding == {"temperature": 0.0, "max_tokens": 256, "stop": ["\n\n"]}
    assert all(r.body["max_tokens"] == 256 for r in llm_server.requests)
    assert Generation.objects.filter(generator__name="cli-gen").count() == 5

    data = json.loads(run_cmd("generation_scores", "--generator", "cli-gen", "--format", "json"))
    assert data["n_examples"] == 5 and data["step_count_mismatch"] == 0 and data["step_format"] == 1
    assert data["gen_ref_ratio"] == pytest.approx(data["avg_gen_tokens"] / data["avg_ref_tokens"])
    text = run_cmd("generation_scores", "--generator", "cli-gen", "--format", "text")
    assert "step-format verifier pass rate (E.4): 100.00%" in text
    assert "step-count mismatch rate (D.3): 0.00%" in text


def test_run_generation_enqueues_without_inline(
    llm_server, small_dataset, django_capture_on_commit_callbacks
):
    llm_server.responder = steps_responder
    from unittest import mock

    with (
        mock.patch("core.tasks.run_chunk.apply_async") as apply_async,
        django_capture_on_commit_callbacks(execute=True),
    ):
        out = run_cmd(
            "run_generation",
            "--generator",
            "q-gen",
            "--dataset",
            "gen-test",
            "--model",
            "m",
            "--base-url",
            llm_server.base_url,  # launching checks that the server answers
            "--topics",
            small_dataset[1][0].slug,
        )
    run = GenerationRun.objects.get(generator__name="q-gen")
    apply_async.assert_called_once_with(
        ("benchmarks.GenerationRun", run.pk), countdown=None, queue=None
    )
    assert "enqueued" in out and run.status == "queued" and run.n_total == 3


def test_run_generation_errors_name_the_problem(small_dataset):
    with pytest.raises(CommandError, match="--dataset nope: no dataset named 'nope'"):
        run_cmd("run_generation", "--generator", "g", "--dataset", "nope", "--model", "m")
    with pytest.raises(CommandError, match="--topics: unknown topic 'zzz'"):
        run_cmd(
            "run_generation",
            "--generator",
            "g",
            "--dataset",
            "gen-test",
            "--model",
            "m",
            "--topics",
            "zzz",
        )
    with pytest.raises(CommandError, match="--decoding: must be a JSON object"):
        run_cmd(
            "run_generation",
            "--generator",
            "g",
            "--dataset",
            "gen-test",
            "--model",
            "m",
            "--decoding",
            "[1]",
        )
    with pytest.raises(CommandError, match="has no model"):
        run_cmd("run_generation", "--generator", "g", "--dataset", "gen-test")
    with pytest.raises(CommandError, match="no generation run with id 999999"):
        run_cmd("run_generation", "--resume", "999999")
    with pytest.raises(CommandError, match="no generator named 'ghost'"):
        run_cmd("generation_scores", "--generator", "ghost")
    assert not GenerationRun.objects.exists()
    Generator.objects.get(name="g")  # created on the way, harmless


@pytest.mark.usefixtures("small_dataset")
def test_cancel_command(llm_server):
    url = ("--base-url", llm_server.base_url)  # launching checks that the server answers
    run_cmd("run_generation", "--generator", "c-gen", "--dataset", "gen-test", "--model", "m", *url)
    run = GenerationRun.objects.get(generator__name="c-gen")
    # a worker holds the run: it is asked to stop
    GenerationRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="worker", heartbeat_at=timezone.now()
    )
    out = run_cmd("run_generation", "--cancel", str(run.pk))
    assert "cancelling (its worker stops after storing what is in flight)" in out
    run.refresh_from_db()
    assert run.status == "cancelling"
    # a run nobody holds stops at once; a finished one cannot be cancelled
    run_cmd("run_generation", "--generator", "d-gen", "--dataset", "gen-test", "--model", "m", *url)
    queued = GenerationRun.objects.get(generator__name="d-gen")
    assert run_cmd("run_generation", "--cancel", str(queued.pk)).strip().endswith(": cancelled")
    with pytest.raises(CommandError, match="is cancelled; only queued or running"):
        run_cmd("run_generation", "--cancel", str(queued.pk))


@pytest.mark.usefixtures("small_dataset")
def test_resume_command_takes_over_only_with_force(llm_server):
    url = ("--base-url", llm_server.base_url)  # launching checks that the server answers
    run_cmd("run_generation", "--generator", "r-gen", "--dataset", "gen-test", "--model", "m", *url)
    run = GenerationRun.objects.get(generator__name="r-gen")
    GenerationRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="worker", heartbeat_at=timezone.now()
    )
    with pytest.raises(CommandError, match="worker is alive"):
        run_cmd("run_generation", "--resume", str(run.pk))
    out = run_cmd("run_generation", "--resume", str(run.pk), "--force")
    assert out.startswith(f"run {run.pk}: r-gen")
    run.refresh_from_db()
    assert run.status == "queued" and run.lease_owner == ""
