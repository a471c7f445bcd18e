"""Generation-run services through the real openai client against the local test server,
on PostgreSQL. Chunks are driven in-process here; tests/generation/test_worker.py runs them
in a real Celery worker."""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.generation import build_prompt
from benchmarks.llm.base import LLMBackend
from benchmarks.models import Generation, GenerationRun, Generator
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_cancel,
    generation_run_create,
    generation_run_execute_chunk,
    generation_run_start,
    generation_scores_summary,
)
from benchmarks.tokens import count_steps_tokens
from tests.benchmarks.generation.conftest import steps_responder

FAST = {"timeout_s": 5, "max_retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 0.05}


def drive(run: GenerationRun) -> GenerationRun:
    """Run the chunk chain in-process (on_commit callbacks do not fire inside a test transaction)."""
    run.refresh_from_db()
    for _ in range(100):
        if not generation_run_execute_chunk(run_id=run.pk, epoch=run.epoch):
            break
    # the end of the selection is seen by one more chunk call
    run.refresh_from_db()
    if run.status == GenerationRun.Status.RUNNING:
        generation_run_execute_chunk(run_id=run.pk, epoch=run.epoch)
        run.refresh_from_db()
    return run


def make_run(llm_server, dataset, generator, **kw) -> GenerationRun:
    defaults = dict(
        model="test-model",
        base_url=llm_server.base_url,
        backend_options=FAST,
        chunk_size=2,
        concurrency=4,
    )
    defaults.update(kw)
    return generation_run_create(generator=generator, dataset=dataset, **defaults)


def test_instruct_run_stores_parsed_scored_generations(llm_server, small_dataset, generator):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    run = make_run(llm_server, dataset, generator, input_price_per_mtok=2, output_price_per_mtok=8)
    assert run.status == "running" and run.n_total == 5 and run.decoding["temperature"] == 0.0
    run = drive(run)

    assert run.status == "completed", run.message
    assert (run.n_done, run.n_failed, run.errors) == (5, 0, [])
    gens = {
        g.procedure.source_example_id: g for g in Generation.objects.filter(generator=generator)
    }
    assert len(gens) == 5
    for p in procedures:
        g = gens[p.source_example_id]
        n = len(p.steps)
        assert g.predicted_steps == [f"Do part {i} of {p.goal}." for i in range(1, n + 1)]
        assert g.token_count == count_steps_tokens(g.predicted_steps)
        assert g.scores["step_count_mismatch"] == 0 and g.scores["step_format"] == 1
        assert g.scores["ref_tokens"] == count_steps_tokens(p.steps)
    # every request: chat endpoint, greedy, the H.2 instruct prompt, no stop
    assert len(llm_server.requests) == 5
    by_goal = {p.goal: p for p in procedures}
    for req in llm_server.requests:
        assert req.kind == "chat" and req.body["temperature"] == 0.0 and "stop" not in req.body
        content = req.body["messages"][0]["content"]
        p = next(p for goal, p in by_goal.items() if f"Goal:\n{goal}\n" in content)
        assert content == build_prompt(
            variant="instruct", goal=p.goal, resources=p.resources, n_steps=len(p.steps)
        )
    # tokens and cost from the server's usage: 100 prompt tokens each, 10 per step
    total_steps = sum(len(p.steps) for p in procedures)
    assert (run.prompt_tokens, run.completion_tokens) == (500, 10 * total_steps)
    assert run.cost == (Decimal(500) * 2 + Decimal(10 * total_steps) * 8) / Decimal(1_000_000)
    # the summary: all formats right, no duplicates
    assert run.scores["n_examples"] == 5
    assert run.scores["step_count_mismatch"] == 0 and run.scores["step_format"] == 1
    assert run.scores["duplicate_steps"] == 0
    generator.refresh_from_db()
    assert (generator.model, generator.prompt_variant, generator.backend) == (
        "test-model",
        "instruct",
        "openai",
    )


def test_base_run_uses_completions_and_stop(llm_server, small_dataset, generator):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    run = drive(make_run(llm_server, dataset, generator, variant="base"))
    assert run.status == "completed"
    assert all(r.kind == "completions" and r.body["stop"] == ["\n\n"] for r in llm_server.requests)
    g = Generation.objects.get(generator=generator, procedure=procedures[0])
    # the runaway continuation after the blank line is cut as a stop-honouring server would
    assert g.model_completion == "\n".join(f"{i}. Do part {i} of Goal number 0." for i in (1, 2, 3))
    assert len(g.predicted_steps) == 3 and "Goal:" not in g.model_completion


def test_topic_selection(llm_server, small_dataset, generator):
    dataset, topics, procedures = small_dataset
    llm_server.responder = steps_responder
    run = drive(make_run(llm_server, dataset, generator, topics=[topics[1]]))
    expected = {p.source_example_id for p in procedures if p.topic_id == topics[1].pk}
    got = set(
        Generation.objects.filter(generator=generator).values_list(
            "procedure__source_example_id", flat=True
        )
    )
    assert got == expected and run.n_total == len(expected) == run.n_done


def test_failures_are_recorded_and_resume_fills_only_the_missing(
    llm_server, small_dataset, generator
):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    llm_server.add_fault("status", status=400, match=lambda r: "Goal number 3\n" in r.prompt_text)
    run = drive(make_run(llm_server, dataset, generator))
    assert run.status == "failed"
    assert run.n_done == 4 and run.n_failed == 1
    assert run.errors[0]["source_example_id"] == "ex-3" and "400" in run.errors[0]["error"]
    assert "1 procedure(s) have no generation" in run.message

    sent_before = len(llm_server.requests)
    run = drive(generation_run_start(run=run))
    assert run.status == "completed" and run.n_done == 5 and run.n_failed == 0 and run.epoch == 2
    assert len(llm_server.requests) == sent_before + 1  # only the missing one was asked again
    assert Generation.objects.filter(generator=generator).count() == 5


def test_existing_generations_are_skipped_and_stale_epochs_do_nothing(
    llm_server, small_dataset, generator
):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    Generation.objects.create(
        procedure=procedures[2], generator=generator, predicted_steps=["kept"]
    )
    run = make_run(llm_server, dataset, generator)
    assert run.n_done == 1
    # a chunk message of an older epoch (a redelivery after a crash) changes nothing
    assert generation_run_execute_chunk(run_id=run.pk, epoch=run.epoch - 1) is False
    assert llm_server.requests == []
    run = drive(run)
    assert run.status == "completed" and len(llm_server.requests) == 4
    assert Generation.objects.get(procedure=procedures[2], generator=generator).predicted_steps == [
        "kept"
    ]
    # running the same epoch again after completion adds nothing either
    assert generation_run_execute_chunk(run_id=run.pk, epoch=run.epoch) is False
    assert Generation.objects.filter(generator=generator).count() == 5


def test_cancel_stops_at_the_next_chunk(llm_server, small_dataset, generator):
    dataset, _, _ = small_dataset
    llm_server.responder = steps_responder
    run = make_run(llm_server, dataset, generator)
    assert generation_run_execute_chunk(run_id=run.pk, epoch=run.epoch) is True
    generation_run_cancel(run=run)
    assert generation_run_execute_chunk(run_id=run.pk, epoch=run.epoch) is False
    run.refresh_from_db()
    assert run.status == "cancelled" and run.n_done == 2 and len(llm_server.requests) == 2
    pending = make_run(llm_server, dataset, generator, start=False)
    assert generation_run_cancel(run=pending).status == "cancelled"


def test_bad_backend_config_fails_the_run_with_a_message(small_dataset, generator, monkeypatch):
    dataset, _, _ = small_dataset
    monkeypatch.delenv("H2R_TEST_MISSING_KEY", raising=False)
    run = generation_run_create(
        generator=generator,
        dataset=dataset,
        model="m",
        base_url="http://127.0.0.1:9/v1",
        backend="no.such.Backend",
    )
    run = drive(run)
    assert run.status == "failed" and "backend" in run.message and "no.such.Backend" in run.message


def test_create_refuses_bad_input(small_dataset, generator):
    dataset, _, _ = small_dataset
    with pytest.raises(GenerationRunError, match="has no model"):
        generation_run_create(generator=generator, dataset=dataset)
    with pytest.raises(GenerationRunError, match="variant 'chat'"):
        generation_run_create(generator=generator, dataset=dataset, model="m", variant="chat")
    with pytest.raises(GenerationRunError, match="decoding: unknown key"):
        generation_run_create(
            generator=generator, dataset=dataset, model="m", decoding={"temprature": 0}
        )
    with pytest.raises(GenerationRunError, match="scorers: unknown scorer 'nope'"):
        generation_run_create(generator=generator, dataset=dataset, model="m", scorers=["nope"])
    based = Generator.objects.create(name="b", model="m", prompt_variant="base")
    with pytest.raises(GenerationRunError, match="uses the base prompt"):
        generation_run_create(generator=based, dataset=dataset, variant="instruct")
    generation_run_create(generator=generator, dataset=dataset, model="m", start=False)
    with pytest.raises(GenerationRunError, match="already has an active run"):
        generation_run_create(generator=generator, dataset=dataset, model="m")
    assert GenerationRun.objects.filter(generator=generator).count() == 1


def test_scores_summary_scores_imported_generations(small_dataset, generator):
    dataset, _, procedures = small_dataset
    # imported: no completion, no scores; one duplicate step list, one too short
    Generation.objects.create(
        procedure=procedures[0], generator=generator, predicted_steps=["a b", "a b", "c"]
    )
    Generation.objects.create(procedure=procedures[1], generator=generator, predicted_steps=["x"])
    summary = generation_scores_summary(generator=generator)
    assert summary["n_examples"] == 2
    assert summary["duplicate_steps"] == 0.5
    # procedures[0] has 3 reference steps, procedures[1] has 4
    assert summary["step_count_mismatch"] == 0.5
    assert summary["step_format"] is None  # no raw completions to verify
    g = Generation.objects.get(procedure=procedures[0], generator=generator)
    assert g.scores["duplicate_steps"] == 1 and g.token_count == count_steps_tokens(
        ["a b", "a b", "c"]
    )


def test_vllm_offline_runs_go_to_the_gpu_queue(
    small_dataset, generator, django_capture_on_commit_callbacks
):
    from unittest import mock

    dataset, _, _ = small_dataset
    with (
        mock.patch("benchmarks.tasks.generation_run_chunk.apply_async") as apply_async,
        mock.patch("benchmarks.tasks.generation_run_chunk.delay") as delay,
    ):
        with django_capture_on_commit_callbacks(execute=True):
            run = generation_run_create(
                generator=generator, dataset=dataset, model="Qwen/Qwen3-0.6B", backend="vllm"
            )
    apply_async.assert_called_once_with(args=(run.pk, run.epoch), queue="gpu")
    delay.assert_not_called()


def test_a_chunk_refused_entirely_stops_the_run(llm_server, small_dataset, generator):
    dataset, _, _ = small_dataset
    llm_server.add_fault("status", status=401, count=100)
    run = drive(make_run(llm_server, dataset, generator))
    assert (
        run.status == "failed" and "refused every request" in run.message and "401" in run.message
    )
    assert len(llm_server.requests) == 2  # one chunk, not the whole dataset
    assert run.n_failed == 2 and run.errors[0]["source_example_id"] == "ex-0"


class ExplodingBackend(LLMBackend):
    def complete_iter(self, requests, *, should_stop=None):
        raise RuntimeError("socket on fire")


def test_a_crashing_backend_fails_the_run_visibly(small_dataset, generator):
    dataset, _, _ = small_dataset
    run = generation_run_create(generator=generator, dataset=dataset, model="m", start=False)
    run = generation_run_start(run=run, enqueue=False)
    assert (
        generation_run_execute_chunk(
            run_id=run.pk, epoch=run.epoch, backend=ExplodingBackend({"model": "m"})
        )
        is False
    )
    run.refresh_from_db()
    assert (
        run.status == "failed" and "RuntimeError: socket on fire" in run.message and run.cursor == 0
    )
