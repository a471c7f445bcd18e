"""Generation-run services through the real openai client against the local test server,
on PostgreSQL. Chunks are driven in-process here (the run engine's ``execute``);
tests/benchmarks/generation/test_worker.py runs them in a real Celery worker."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from benchmarks.generation import build_prompt
from benchmarks.llm.base import LLMBackend, LLMResponse
from benchmarks.models import Generation, GenerationRun, Generator
from benchmarks.services import generation_execution
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_cancel,
    generation_run_create,
    generation_run_start,
)
from benchmarks.services.scores import generation_scores_summary
from benchmarks.tokens import count_steps_tokens
from core.runs import engine
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive, steps_responder

LABEL = "benchmarks.GenerationRun"


def chunk(run: GenerationRun) -> str:
    """One chunk of the run, as the engine's chunk task works it (without chaining the next)."""
    return engine.execute(LABEL, run.pk, chain=False).status


def hold_lease(run: GenerationRun, *, age_s: float = 0) -> None:
    """Another execution (a worker) holds the run, its last heartbeat ``age_s`` ago."""
    GenerationRun.objects.filter(pk=run.pk).update(
        status="running",
        lease_owner="other-worker",
        heartbeat_at=timezone.now() - timedelta(seconds=age_s),
    )


def test_instruct_run_stores_parsed_scored_generations(llm_server, small_dataset, generator):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    run = make_generation_run(
        llm_server, dataset, generator, input_price_per_mtok=2, output_price_per_mtok=8
    )
    assert run.status == "queued" and run.n_total == 5 and run.decoding["temperature"] == 0.0
    run = drive(run)

    assert run.status == "done", run.error
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
    run = drive(make_generation_run(llm_server, dataset, generator, variant="base"))
    assert run.status == "done"
    assert all(r.kind == "completions" and r.body["stop"] == ["\n\n"] for r in llm_server.requests)
    g = Generation.objects.get(generator=generator, procedure=procedures[0])
    # the runaway continuation after the blank line is cut as a stop-honouring server would
    assert g.model_completion == "\n".join(f"{i}. Do part {i} of Goal number 0." for i in (1, 2, 3))
    assert len(g.predicted_steps) == 3 and "Goal:" not in g.model_completion


def test_topic_selection(llm_server, small_dataset, generator):
    dataset, topics, procedures = small_dataset
    llm_server.responder = steps_responder
    run = drive(make_generation_run(llm_server, dataset, generator, topics=[topics[1]]))
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
    dataset, _, _procedures = small_dataset
    llm_server.responder = steps_responder
    llm_server.add_fault("status", status=400, match=lambda r: "Goal number 3\n" in r.prompt_text)
    run = drive(make_generation_run(llm_server, dataset, generator))
    assert run.status == "failed"
    assert run.n_done == 4 and run.n_failed == 1
    assert run.errors[0]["source_example_id"] == "ex-3" and "400" in run.errors[0]["error"]
    assert "1 procedure(s) have no generation" in run.error

    sent_before = len(llm_server.requests)
    run = generation_run_start(run=run, enqueue=False)
    assert (run.status, run.cursor, run.n_failed, run.errors, run.error) == ("queued", 0, 0, [], "")
    run = drive(run)
    assert run.status == "done" and run.n_done == 5 and run.n_failed == 0 and run.errors == []
    assert len(llm_server.requests) == sent_before + 1  # only the missing one was asked again
    assert Generation.objects.filter(generator=generator).count() == 5


def test_existing_generations_are_skipped_and_a_second_execution_does_nothing(
    llm_server, small_dataset, generator
):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    Generation.objects.create(
        procedure=procedures[2], generator=generator, predicted_steps=["kept"]
    )
    run = make_generation_run(llm_server, dataset, generator)
    assert run.n_done == 1
    # a second chunk message (a redelivery after a crash) while a live worker holds the run
    # changes nothing
    hold_lease(run)
    assert chunk(run) == "busy"
    assert llm_server.requests == []
    hold_lease(run, age_s=3600)  # that worker died: its lease is stale, the run is taken over
    run = drive(run)
    assert run.status == "done" and len(llm_server.requests) == 4
    assert Generation.objects.get(procedure=procedures[2], generator=generator).predicted_steps == [
        "kept"
    ]
    # a chunk message after the end adds nothing either
    assert chunk(run) == "inactive"
    assert Generation.objects.filter(generator=generator).count() == 5


def test_cancel_stops_at_the_next_chunk(llm_server, small_dataset, generator, settings):
    dataset, _, _ = small_dataset
    settings.RUN_CHUNK_SECONDS = 0  # a chunk's time is up after its first page (chunk_size)
    llm_server.responder = steps_responder
    run = make_generation_run(llm_server, dataset, generator)
    assert chunk(run) == "more"
    assert generation_run_cancel(run=run).status == "cancelling"  # its worker is alive
    assert chunk(run) == "cancelled"
    assert chunk(run) == "inactive"
    run.refresh_from_db()
    assert run.status == "cancelled" and run.n_done == 2 and len(llm_server.requests) == 2
    pending = make_generation_run(llm_server, dataset, generator, start=False)
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
    assert run.status == "failed" and "backend" in run.error and "no.such.Backend" in run.error


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
    _dataset, _, procedures = small_dataset
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
    small_dataset, generator, django_capture_on_commit_callbacks, llm_server
):
    from unittest import mock

    dataset, _, _ = small_dataset
    with (
        mock.patch("core.tasks.run_chunk.apply_async") as apply_async,
        django_capture_on_commit_callbacks(execute=True),
    ):
        run = generation_run_create(
            generator=generator, dataset=dataset, model="Qwen/Qwen3-0.6B", backend="vllm"
        )
    apply_async.assert_called_once_with((LABEL, run.pk), countdown=None, queue="gpu")

    other = Generator.objects.create(name="http-gen")
    with (
        mock.patch("core.tasks.run_chunk.apply_async") as apply_async,
        django_capture_on_commit_callbacks(execute=True),
    ):
        run = generation_run_create(
            generator=other, dataset=dataset, model="m", base_url=llm_server.base_url
        )
    apply_async.assert_called_once_with((LABEL, run.pk), countdown=None, queue=None)


def test_a_chunk_refused_entirely_stops_the_run(llm_server, small_dataset, generator):
    dataset, _, _ = small_dataset
    llm_server.add_fault("status", status=401, count=100)
    # the first page (chunk_size 2) refused with 2 in flight: nothing more is sent
    run = drive(make_generation_run(llm_server, dataset, generator, concurrency=2))
    assert run.status == "failed" and "refused every request" in run.error and "401" in run.error
    assert len(llm_server.requests) == 2  # one page, not the whole dataset
    assert run.n_failed == 2  # replies are stored as they arrive: errors in arrival order
    assert sorted(e["source_example_id"] for e in run.errors)[0] == "ex-0"


class ExplodingBackend(LLMBackend):
    """Answers the first request, then its socket catches fire."""

    def complete_iter(self, requests, *, should_stop=None):
        next(iter(requests))
        yield (
            0,
            LLMResponse(text="1. Boil water.\n2. Pour it.", prompt_tokens=7, completion_tokens=3),
        )
        raise RuntimeError("socket on fire")


def test_a_crashing_backend_fails_the_run_visibly_keeping_what_finished(
    small_dataset, generator, monkeypatch
):
    dataset, _, procedures = small_dataset
    monkeypatch.setattr(generation_execution, "_BACKENDS", {})
    run = generation_run_create(
        generator=generator,
        dataset=dataset,
        model="m",
        backend=f"{__name__}.ExplodingBackend",
        start=False,
    )
    assert chunk(run) == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "RuntimeError: socket on fire" in run.error
    # the reply that arrived before the crash is stored, counted and paid for
    kept = Generation.objects.get(generator=generator)
    assert kept.procedure == procedures[0] and kept.predicted_steps == ["Boil water.", "Pour it."]
    assert (run.n_done, run.prompt_tokens, run.completion_tokens, run.cursor) == (
        1,
        7,
        3,
        procedures[0].pk,
    )


class CancelledMidChunkBackend(LLMBackend):
    """Answers one request at a time; while the second is in flight, someone cancels the run
    in the console (its worker holds it, so the run becomes ``cancelling``). Once."""

    cancelled = False

    def complete_iter(self, requests, *, should_stop=None):
        for index, _request in enumerate(requests):
            if index == 1 and not self.cancelled:
                self.cancelled = True
                assert generation_run_cancel(run=GenerationRun.objects.get()).status == "cancelling"
            yield index, LLMResponse(text="1. Step.", prompt_tokens=1, completion_tokens=1)
            if should_stop is not None and should_stop():
                return


def test_cancel_mid_chunk_keeps_the_finished_replies(small_dataset, generator, monkeypatch):
    dataset, _, procedures = small_dataset
    monkeypatch.setattr(generation_execution, "FLUSH_EVERY", 1)  # store (and beat) every reply
    monkeypatch.setattr(generation_execution, "BEAT_EVERY_S", 0.0)
    monkeypatch.setattr(generation_execution, "_BACKENDS", {})  # a fresh backend instance
    run = generation_run_create(
        generator=generator,
        dataset=dataset,
        model="m",
        backend=f"{__name__}.CancelledMidChunkBackend",
        chunk_size=5,
        start=False,
    )
    assert chunk(run) == "cancelled"
    run.refresh_from_db()
    assert run.status == "cancelled" and run.finished_at is not None and run.lease_owner == ""
    # the reply in flight when the cancel came is kept with the first; nothing more is asked
    assert set(Generation.objects.values_list("procedure_id", flat=True)) == {
        procedures[0].pk,
        procedures[1].pk,
    }
    assert (run.n_done, run.n_failed, run.cursor) == (2, 0, procedures[1].pk)
    # resuming asks only the other three
    run = drive(generation_run_start(run=run, enqueue=False))
    assert run.status == "done" and run.n_done == 5
    assert Generation.objects.filter(generator=generator).count() == 5


def test_a_run_held_by_a_live_worker_is_only_taken_over_with_force(small_dataset, generator):
    dataset, _, _ = small_dataset
    run = generation_run_create(generator=generator, dataset=dataset, model="m", start=False)
    hold_lease(run)
    run.refresh_from_db()
    assert not run.worker_gone
    with pytest.raises(GenerationRunError, match="worker is alive"):
        generation_run_start(run=run)
    run = generation_run_start(run=run, force=True, enqueue=False)  # its worker is known gone
    assert (run.status, run.lease_owner) == ("queued", "")
    hold_lease(run, age_s=3600)
    run.refresh_from_db()
    assert run.worker_gone
    run = generation_run_start(run=run, enqueue=False)
    assert (run.status, run.lease_owner) == ("queued", "")
    with pytest.raises(GenerationRunError, match="done; nothing to resume"):
        GenerationRun.objects.filter(pk=run.pk).update(status="done")
        generation_run_start(run=run)


def test_a_chunk_walks_past_chunk_size_until_its_time_is_up(
    llm_server, small_dataset, generator, settings
):
    """``chunk_size`` is how many procedures a chunk reads at a time: the chunk keeps walking,
    page after page, with its requests in flight (no drain and no new task every page) until
    none is left — or, with its time up (``RUN_CHUNK_SECONDS``), after the page it is on."""
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    run = make_generation_run(llm_server, dataset, generator, chunk_size=2, concurrency=2)
    assert chunk(run) == "done"  # five procedures, pages of two: one chunk
    run.refresh_from_db()
    assert (run.n_done, run.cursor, len(llm_server.requests)) == (5, procedures[-1].pk, 5)

    settings.RUN_CHUNK_SECONDS = 0  # due at once: each chunk stops after its first page
    other = Generator.objects.create(name="paged")
    run = make_generation_run(llm_server, dataset, other, chunk_size=2, concurrency=2)
    assert [chunk(run) for _ in range(3)] == ["more", "more", "done"]
    run.refresh_from_db()
    assert (run.status, run.n_done, len(llm_server.requests)) == ("done", 5, 10)


def test_a_chunk_forgets_each_procedure_once_its_reply_is_stored(
    llm_server, small_dataset, generator, monkeypatch
):
    """A chunk that walks a whole lane holds only the procedures in flight or waiting for an
    earlier reply (the cursor's prefix), not every procedure it asked."""
    dataset, _, _ = small_dataset
    llm_server.responder = steps_responder
    seen: list[int] = []
    flush = generation_execution._Chunk.flush

    def watched(self):
        flush(self)
        seen.append(len(self.procedures))

    monkeypatch.setattr(generation_execution._Chunk, "flush", watched)
    run = make_generation_run(llm_server, dataset, generator, chunk_size=1, concurrency=2)
    assert chunk(run) == "done"
    assert seen and max(seen) <= 2 and seen[-1] == 0, seen
