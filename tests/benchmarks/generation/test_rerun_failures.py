"""A done (or failed) generation run re-runs only its failures: procedures without a generation
and generations with no step (a reply nothing could be parsed from); everything else is kept
and never asked again. Service, command and admin action share one home
(``generation_run_rerun_failures``, on the engine's resume as judge runs do)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from benchmarks.models import Generation, GenerationRun
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_failures,
    generation_run_rerun_failures,
)
from core.runs import engine
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import steps_responder

EMPTY_FOR = "Goal number 2\n"


def _flaky(state: dict):
    """Empty replies for one goal until ``state["fixed"]``."""

    def respond(req):
        text = req.prompt_text if req.kind == "completions" else req.last_message
        if EMPTY_FOR in text and not state["fixed"]:
            return {"text": "", "prompt_tokens": 100, "completion_tokens": 0}
        return steps_responder(req)

    return respond


@pytest.fixture
def done_with_an_empty_generation(llm_server, small_dataset, generator):
    dataset, _, _ = small_dataset
    state = {"fixed": False}
    llm_server.responder = _flaky(state)
    run = engine.execute_inline(make_generation_run(llm_server, dataset, generator))
    assert run.status == "done" and run.n_done == 5
    empty = Generation.objects.get(generator=generator, predicted_steps=[])
    assert empty.procedure.source_example_id == "ex-2"
    state["fixed"] = True
    return run, empty


def test_only_the_failures_are_asked_again(llm_server, generator, done_with_an_empty_generation):
    run, empty = done_with_an_empty_generation
    kept = dict(
        Generation.objects.filter(generator=generator)
        .exclude(pk=empty.pk)
        .values_list("pk", "predicted_steps")
    )
    assert generation_run_failures(run=run)["empty"].count() == 1
    sent = len(llm_server.requests)
    run = generation_run_rerun_failures(run=run, enqueue=False)
    assert run.status == "queued"
    run = engine.execute_inline(run)
    assert (run.status, run.n_done, run.n_failed) == ("done", 5, 0)
    assert len(llm_server.requests) == sent + 1  # the one failure, nothing else
    redone = Generation.objects.get(generator=generator, procedure=empty.procedure)
    assert redone.predicted_steps and redone.pk != empty.pk
    assert (
        dict(
            Generation.objects.filter(generator=generator)
            .exclude(pk=redone.pk)
            .values_list("pk", "predicted_steps")
        )
        == kept
    )
    with pytest.raises(GenerationRunError, match="no failures to re-run"):
        generation_run_rerun_failures(run=run, enqueue=False)


def test_refused_for_active_or_cancelled_runs(llm_server, small_dataset, generator):
    dataset, _, _ = small_dataset
    run = make_generation_run(llm_server, dataset, generator)
    with pytest.raises(GenerationRunError, match="only a done or failed run"):
        generation_run_rerun_failures(run=run, enqueue=False)
    run = engine.cancel(run)
    with pytest.raises(GenerationRunError, match="resume a cancelled one"):
        generation_run_rerun_failures(run=run, enqueue=False)


def test_command_flag(llm_server, done_with_an_empty_generation):
    run, _ = done_with_an_empty_generation
    out = StringIO()
    call_command("run_generation", "--rerun-failures", str(run.pk), "--inline", stdout=out)
    assert f"run {run.pk}: done — 5/5 generated, 0 failed" in out.getvalue()
    assert not Generation.objects.filter(predicted_steps=[]).exists()


def test_admin_action(make_user, done_with_an_empty_generation, django_capture_on_commit_callbacks):
    run, _ = done_with_an_empty_generation
    web = Client()
    web.force_login(make_user("adm", role="admin"))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = web.post(
            "/admin/benchmarks/generationrun/",
            {"action": "rerun_failures_runs", "_selected_action": [run.pk]},
            follow=True,
        )
    assert "its failures are asked again (1)" in response.content.decode()
    assert GenerationRun.objects.get(pk=run.pk).status == "queued"
    assert len(callbacks) == 1  # the first chunk, enqueued on commit
