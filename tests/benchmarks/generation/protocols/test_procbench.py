"""ProcBench protocol runs: free-text answers converted by an LLM step (raw and converted both
stored) and scored by the pack as stored; cancel and resume ask only what is missing; a failed
conversion fails the reply and is asked again; JSON answers need no conversion; a run recorded
then replayed gives the same outputs with no model call."""

from __future__ import annotations

import json

import pytest

from benchmarks.models import Generation, Generator
from benchmarks.services.generation_runs import generation_run_cancel, generation_run_start
from core.runs import engine
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive
from tests.benchmarks.generation.protocols.support import (
    CONVERTED,
    LABEL,
    imported,
    procbench_items,
    procbench_responder,
    procbench_run,
    scoring,
)
from tests.benchmarks.packs.test_protocols import DELETECHAR_GOLD

pytestmark = pytest.mark.django_db


def test_procbench_run_converts_free_text_stores_both_and_the_pack_scores_it(llm_server, generator):
    llm_server.responder = procbench_responder
    dataset = imported("procbench", procbench_items(), "pb")
    run = procbench_run(llm_server, dataset, generator)
    assert (run.protocol, run.variant, run.protocol_options["answer_format"]) == (
        "procbench",
        "instruct",
        "free_text",
    )
    run = drive(run)
    assert run.status == "done", run.error
    assert run.scores == {
        "protocol": "procbench",
        "pack": "procbench",
        "n": 3,
        "n_answer": 2,
        "finish_reasons": {"stop": 3},
    }
    gens = {g.procedure.source_example_id: g for g in Generation.objects.filter(run=run)}
    g1 = gens["dc-1"]
    assert g1.model_completion == "Free-text answer for item 1: ... final state u"  # raw
    assert g1.payload["prediction"] == CONVERTED["1"]  # converted
    assert g1.payload["protocol"]["conversion_raw"] == json.dumps(CONVERTED["1"])
    assert g1.payload["protocol"]["conversion_model"] == "conv-model"
    assert g1.predicted_steps == DELETECHAR_GOLD and g1.finish_reason == "stop"
    assert gens["dc-3"].payload["prediction"] is None
    models = [r.body["model"] for r in llm_server.requests]
    assert sorted(models) == ["conv-model"] * 3 + ["test-model"] * 3
    # the pack's scoring run reads the stored outputs as they are
    scored_run, scores = scoring("procbench", dataset, generator)
    assert scores["dc-1"]["metrics"] == {"pml": 8, "pa": 1.0, "sm": 1, "fm": 1}
    assert scores["dc-2"]["metrics"] == {"pml": 2, "pa": 0.25, "sm": 0, "fm": 1}
    assert scores["dc-3"]["metrics"] == {"pml": 0, "pa": 0.0, "sm": 0, "fm": 0}
    assert scored_run.summary["pa"] == pytest.approx(1.25 / 3)


def test_procbench_cancel_then_resume_asks_only_what_is_missing(llm_server, generator, settings):
    llm_server.responder = procbench_responder
    settings.RUN_CHUNK_SECONDS = 0  # a chunk's time is up after its first page (chunk_size)
    dataset = imported("procbench", procbench_items(), "pb")
    run = procbench_run(llm_server, dataset, generator, chunk_size=1)
    assert engine.execute(LABEL, run.pk, chain=False).status == "more"
    assert generation_run_cancel(run=run).status == "cancelling"
    assert engine.execute(LABEL, run.pk, chain=False).status == "cancelled"
    run.refresh_from_db()
    assert (run.status, run.n_done) == ("cancelled", 1)
    run = drive(generation_run_start(run=run, enqueue=False))
    assert (run.status, run.n_done, run.n_failed) == ("done", 3, 0)
    assert len(llm_server.requests) == 6  # 3 answers + 3 conversions, none asked twice
    assert Generation.objects.filter(generator=generator).count() == 3


def test_a_failed_conversion_fails_the_reply_and_resume_asks_it_again(llm_server, generator):
    llm_server.responder = procbench_responder
    dataset = imported("procbench", procbench_items()[:2], "pb")
    llm_server.add_fault(
        "status",
        status=500,
        count=3,
        match=lambda r: r.body.get("model") == "conv-model" and "(item 2)" in r.prompt_text,
    )
    run = drive(procbench_run(llm_server, dataset, generator))
    assert run.status == "failed" and "1 procedure(s) have no generation" in run.error
    assert run.errors[0]["source_example_id"] == "dc-2"
    assert run.errors[0]["error"].startswith("conversion: ")
    run = drive(generation_run_start(run=run, enqueue=False))
    assert (run.status, run.n_done) == ("done", 2)
    g2 = Generation.objects.get(procedure__source_example_id="dc-2")
    assert g2.payload["prediction"] == CONVERTED["2"]


def test_procbench_json_answer_format_is_scored_without_conversion(llm_server, generator):
    def responder(req):
        assert '{"intermediate": [' in req.prompt_text
        return json.dumps({"intermediate": DELETECHAR_GOLD[:-1], "final": "u"})

    llm_server.responder = responder
    dataset = imported("procbench", procbench_items()[:1], "pb")
    run = drive(
        make_generation_run(
            llm_server,
            dataset,
            generator,
            protocol="procbench",
            protocol_options={"answer_format": "json"},
        )
    )
    assert run.status == "done" and len(llm_server.requests) == 1
    _, scores = scoring("procbench", dataset, generator)
    assert scores["dc-1"]["metrics"]["sm"] == 1


def test_procbench_run_recorded_then_replayed_gives_the_same_outputs(
    llm_server, generator, tmp_path
):
    llm_server.responder = procbench_responder
    dataset = imported("procbench", procbench_items(), "pb")
    recording = tmp_path / "replies.jsonl"
    inner = {"backend": "openai", "base_url": llm_server.base_url, "model": "test-model"}
    recorded = drive(
        procbench_run(
            llm_server,
            dataset,
            generator,
            backend="record",
            backend_options={"recording": str(recording), "inner": inner},
            start=False,
        )
    )
    assert recorded.status == "done", recorded.error
    assert len(recording.read_text().splitlines()) == 6  # 3 answers + 3 conversions
    n_requests = len(llm_server.requests)
    again = Generator.objects.create(name="replayed")
    replayed = drive(
        procbench_run(
            llm_server,
            dataset,
            again,
            backend="replay",
            backend_options={"recording": str(recording)},
            start=False,
        )
    )
    assert replayed.status == "done", replayed.error
    assert len(llm_server.requests) == n_requests  # no model called

    def outputs(run):
        return {
            g.procedure.source_example_id: (g.model_completion, g.payload["prediction"])
            for g in Generation.objects.filter(run=run).select_related("procedure")
        }

    assert outputs(replayed) == outputs(recorded)
    assert outputs(replayed)["dc-1"][1] == CONVERTED["1"]
