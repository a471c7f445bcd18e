"""Generation runs with a paper's protocol, end to end on PostgreSQL through the
real openai client and the local OpenAI-compatible test server: items imported with
``import_pack``'s service, generated with the pack's protocol, then scored by the pack's scoring
run with no conversion in between. ProcBench's conversion step (raw + converted stored),
cancel / resume, a failed conversion asked again, the command, the API, and a real Celery
worker."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from annotation.selectors.forms import item_view, study_form
from benchmarks.models import Dataset, Generation, GenerationRun, Generator
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_cancel,
    generation_run_start,
)
from benchmarks.services.pack_imports import pack_import
from benchmarks.services.scoring_runs import scoring_run_create
from core.runs import engine
from tests.annotation.factories import make_form_study
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive
from tests.benchmarks.packs.test_protocols import (
    DELETECHAR_GOLD,
    DELETECHAR_TEMPLATE,
    PATH_CONTEXT,
    SCIRECIPE_GOLD,
    SCIRECIPE_K,
    TRAVEL_F6,
    TRAVEL_F6_PLAN,
)
from tests.support.worker import running_worker, wait_for

pytestmark = pytest.mark.django_db
LABEL = "benchmarks.GenerationRun"
WRONG_THIRD = ["hhouumkd", "hhoumkd", "hoummkd", *DELETECHAR_GOLD[3:]]


def imported(pack: str, rows: list[dict], name: str) -> Dataset:
    pack_import(pack=pack, dataset=name, lines=[json.dumps(r) for r in rows])
    return Dataset.objects.get(name=name)


def scoring(pack: str, dataset: Dataset, generator: Generator):
    run = engine.execute_inline(
        scoring_run_create(generator=generator, dataset=dataset, pack=pack, start=False)
    )
    assert run.status == "done", (run.error, run.errors)
    scores = {
        g.procedure.source_example_id: g.pack_scores[pack]
        for g in Generation.objects.filter(generator=generator).select_related("procedure")
    }
    return run, scores


# --- ProcBench: free text, converted by an LLM step ---------------------------------------------
def procbench_items() -> list[dict]:
    return [
        {"id": f"dc-{k}", "template": DELETECHAR_TEMPLATE,
         "question": f"String: hchouumkd\nSteps: c, u, h, k, d, o, h, m\n(item {k})",
         "gold": DELETECHAR_GOLD}
        for k in (1, 2, 3)
    ]  # fmt: skip


CONVERTED = {
    "1": {"intermediate": DELETECHAR_GOLD[:-1], "final": "u"},
    "2": {"intermediate": WRONG_THIRD[:-1], "final": "u"},
}


def procbench_responder(req) -> dict:
    """The generator answers in free text; the conversion model (``conv-model``) returns the
    JSON answer format for items 1 and 2 and something that is not JSON for item 3."""
    text = req.prompt_text
    k = re.search(r"\(item (\d)\)", text).group(1)
    if req.body["model"] == "conv-model":
        assert req.body["response_format"]["json_schema"]["name"] == "procbench_answer"
        assert f"[Answer]\nFree-text answer for item {k}" in text
        reply = json.dumps(CONVERTED[k]) if k in CONVERTED else "sorry, no JSON here"
        return {"text": reply, "prompt_tokens": 50, "completion_tokens": 20}
    assert text.startswith(DELETECHAR_TEMPLATE + "\n\n[Question]\n")
    return {"text": f"Free-text answer for item {k}: ... final state u", "completion_tokens": 30}


def test_procbench_run_converts_free_text_stores_both_and_the_pack_scores_it(llm_server, generator):
    llm_server.responder = procbench_responder
    dataset = imported("procbench", procbench_items(), "pb")
    run = make_generation_run(
        llm_server, dataset, generator, protocol="procbench",
        protocol_options={"conversion_model": "conv-model"},
    )  # fmt: skip
    assert (run.protocol, run.variant, run.protocol_options["answer_format"]) == (
        "procbench", "instruct", "free_text",
    )  # fmt: skip
    run = drive(run)
    assert run.status == "done", run.error
    assert run.scores == {
        "protocol": "procbench", "pack": "procbench", "n": 3, "n_answer": 2,
        "finish_reasons": {"stop": 3},
    }  # fmt: skip
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
    run = make_generation_run(
        llm_server, dataset, generator, protocol="procbench", chunk_size=1,
        protocol_options={"conversion_model": "conv-model"},
    )  # fmt: skip
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
        "status", status=500, count=3,
        match=lambda r: r.body.get("model") == "conv-model" and "(item 2)" in r.prompt_text,
    )  # fmt: skip
    run = drive(
        make_generation_run(
            llm_server, dataset, generator, protocol="procbench",
            protocol_options={"conversion_model": "conv-model"},
        )
    )  # fmt: skip
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
            llm_server, dataset, generator, protocol="procbench",
            protocol_options={"answer_format": "json"},
        )
    )  # fmt: skip
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
    options = {"conversion_model": "conv-model"}
    recorded = drive(
        make_generation_run(
            llm_server, dataset, generator, protocol="procbench", protocol_options=options,
            backend="record", backend_options={"recording": str(recording), "inner": inner},
            start=False,
        )
    )  # fmt: skip
    assert recorded.status == "done", recorded.error
    assert len(recording.read_text().splitlines()) == 6  # 3 answers + 3 conversions
    n_requests = len(llm_server.requests)
    again = Generator.objects.create(name="replayed")
    replayed = drive(
        make_generation_run(
            llm_server, dataset, again, protocol="procbench", protocol_options=options,
            backend="replay", backend_options={"recording": str(recording)}, start=False,
        )
    )  # fmt: skip
    assert replayed.status == "done", replayed.error
    assert len(llm_server.requests) == n_requests  # no model called

    def outputs(run):
        return {
            g.procedure.source_example_id: (g.model_completion, g.payload["prediction"])
            for g in Generation.objects.filter(run=run).select_related("procedure")
        }

    assert outputs(replayed) == outputs(recorded)
    assert outputs(replayed)["dc-1"][1] == CONVERTED["1"]


# --- LongProc ----------------------------------------------------------------------------------
COUNTDOWN_ITEMS = [
    {"id": "f5", "numbers": [44, 48, 35, 6], "target": 25, "level": "0.5k"},
    {"id": "cut", "numbers": [30, 6, 8, 6], "target": 27, "level": "2k"},
]


def countdown_responder(req) -> dict:
    if "Numbers: 44, 48, 35, 6" in req.prompt_text:
        return {
            "text": "<think>Trying 48 - 44 first.</think>\n<Solution>\n48 - 44 = 4\n"
            "35 - 4 = 31\n31 - 6 = 25\n</Solution>",
            "completion_tokens": 40,
        }
    return {"text": "<think>30 + 6 = 36, 36 * 6 = 216, 216 / 8", "finish_reason": "length"}


def test_longproc_countdown_run_budget_tags_termination_then_scored(llm_server, generator):
    llm_server.responder = countdown_responder
    dataset = imported("longproc-countdown", COUNTDOWN_ITEMS, "cd")
    run = drive(
        make_generation_run(
            llm_server, dataset, generator, protocol="longproc-countdown",
            protocol_options={"buffer": 500},
        )
    )  # fmt: skip
    assert run.status == "done", run.error
    budgets = sorted(r.body["max_tokens"] for r in llm_server.requests)
    assert budgets == [1000, 2500]  # 0.5K + 500 and 2K + 500
    assert all(r.body["temperature"] == 0.0 for r in llm_server.requests)
    assert run.scores["finish_reasons"] == {"length": 1, "stop": 1}
    gens = {g.procedure.source_example_id: g for g in Generation.objects.filter(run=run)}
    assert gens["f5"].payload["protocol"]["extracted"].split()[:3] == ["48", "-", "44"]
    assert gens["cut"].payload["protocol"]["extracted"] is None
    assert gens["cut"].finish_reason == "length"
    scored_run, scores = scoring("longproc-countdown", dataset, generator)
    assert scores["f5"]["metrics"] == {"correct": 1, "terminated": 1}
    assert scores["cut"]["metrics"] == {"correct": 0, "terminated": 0}
    assert (scored_run.summary["term"], scored_run.summary["acc_term"]) == (0.5, 1.0)


def test_longproc_path_traversal_reasoning_budget_and_exact_match(llm_server, generator):
    gold = "<Route>\nFrom Fort Worth, take a ferry to Manchester.\nFrom Manchester, take a plane to Indianapolis.\nFrom Indianapolis, take a ferry to Houston.\n</Route>"
    item = {"id": "p1", "context": PATH_CONTEXT, "src_city": "Fort Worth",
            "dst_city": "Houston", "gold": gold}  # fmt: skip
    llm_server.responder = lambda req: {"text": f"<think>{gold}</think>"}  # answer in the thinking
    dataset = imported("longproc-path-traversal", [item], "pt")
    run = drive(
        make_generation_run(
            llm_server, dataset, generator, protocol="longproc-path-traversal",
            protocol_options={"level": "8k", "reasoning": True},
        )
    )  # fmt: skip
    assert run.status == "done" and llm_server.requests[0].body["max_tokens"] == 16384
    assert "Now find the route from Fort Worth to Houston" in llm_server.requests[0].prompt_text
    _, scores = scoring("longproc-path-traversal", dataset, generator)
    assert scores["p1"]["metrics"]["correct"] == 1


TOM_GOLD = (
    "- Step 0: (initial state) {Carol location: pantry; tweezers location: playroom's pedestal; "
    "Carol sees tweezers: False; Carol's belief on tweezers: None}\n"
    "- Step 1: (Carol location changed; tweezers location unchanged) {Carol location: playroom; "
    "tweezers location: playroom's pedestal; Carol sees tweezers: True; Carol's belief on "
    "tweezers: playroom's pedestal}\nFinal Answer: the playroom's pedestal"
)
OTHER_LONGPROC = [
    (
        "longproc-html-to-tsv",
        {"id": "h", "level": "2k", "html": "<ul><li>Oak</li><li>Elm</li></ul>",
         "task_topic": "trees", "target_information": "(1) Name", "tsv_header": "Name",
         "gold": "Name\nOak\nElm"},
        "Here it is:\n```tsv\nName\nOak\nElm\n```",
        "Based on the HTML webpage above about trees",
        {"f1": 1.0},
    ),
    (
        "longproc-tom-tracking",
        {"id": "t", "level": "2k", "story": "Step 0: Carol is in the pantry.\nStep 1: Carol "
         "moves to the playroom.", "question": "Where does Carol believe the tweezers is?",
         "gold": TOM_GOLD},
        "Tracking Carol.\n" + TOM_GOLD,
        "Where does Carol believe the tweezers is?",
        {"correct": 1},
    ),
    (
        "longproc-travel",
        {"id": "f6", "level": "2k", **TRAVEL_F6},
        "<Solving Procedure>Hamburg first.</Solving Procedure>\n" + TRAVEL_F6_PLAN,
        "You want to spend 7 days in Hamburg.",
        {"correct": 1},
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    "pack, item, reply, in_prompt, expected", OTHER_LONGPROC, ids=[c[0] for c in OTHER_LONGPROC]
)
def test_other_longproc_tasks_generate_and_score(
    llm_server, generator, pack, item, reply, in_prompt, expected
):
    llm_server.responder = lambda req: reply
    dataset = imported(pack, [item], "lp")
    run = drive(make_generation_run(llm_server, dataset, generator, protocol=pack))
    assert run.status == "done", run.error
    request = llm_server.requests[0]
    assert in_prompt in request.prompt_text and request.body["max_tokens"] == 3000
    g = Generation.objects.get(run=run)
    assert g.payload["protocol"]["extracted"] and g.finish_reason == "stop"
    _, scores = scoring(pack, dataset, generator)
    metrics = scores[item["id"]]["metrics"]
    assert {k: metrics[k] for k in expected} == expected and metrics["terminated"] == 1


def test_an_item_the_prompt_cannot_be_built_from_is_refused_at_create(llm_server, generator):
    item = {"id": "p1", "context": PATH_CONTEXT, "src_city": "Fort Worth", "gold": "x"}
    dataset = imported("longproc-path-traversal", [item], "pt")
    with pytest.raises(GenerationRunError, match="item 'p1', field 'dst_city': is required"):
        make_generation_run(
            llm_server, dataset, generator, protocol="longproc-path-traversal",
            protocol_options={"level": "2k"},
        )  # fmt: skip
    with pytest.raises(GenerationRunError, match="unknown option\\(s\\) nope"):
        make_generation_run(llm_server, dataset, generator, protocol="procbench",
                            protocol_options={"nope": 1})  # fmt: skip
    with pytest.raises(GenerationRunError, match="sends chat prompts: use the instruct variant"):
        make_generation_run(llm_server, dataset, generator, protocol="longproc-path-traversal",
                            variant="base", protocol_options={"level": "2k"})  # fmt: skip
    with pytest.raises(GenerationRunError, match="unknown protocol 'x'"):
        make_generation_run(llm_server, dataset, generator, protocol="x")
    assert not GenerationRun.objects.exists()


# --- SciRecipe and CustomPlans ------------------------------------------------------------------
def test_scirecipe_run_stores_structured_steps_and_the_pack_scores_the_raw_answer(
    llm_server, generator
):
    items = [
        {"id": "k", "query": "Fix the wash (k).", "gold": SCIRECIPE_GOLD,
         "action_library": ["centrifuge", "remove", "resuspend", "filter"]},
        {"id": "bad", "query": "Something else (bad).", "gold": SCIRECIPE_GOLD},
    ]  # fmt: skip
    llm_server.responder = lambda req: SCIRECIPE_K if "(k)" in req.prompt_text else "Just wash."
    dataset = imported("scirecipe", items, "sr")
    run = drive(make_generation_run(llm_server, dataset, generator, protocol="scirecipe"))
    assert run.status == "done" and run.scores["n_answer"] == 1
    g = Generation.objects.get(procedure__source_example_id="k")
    assert g.payload["protocol"]["steps"][2] == {
        "action": "resuspend", "objects": ["nuclei pellet"],
        "parameters": ["1 ml", "wash solution 2"],
    }  # fmt: skip
    assert g.predicted_steps[0] == "Centrifuge the nuclei suspension at 500xg for 5 min at 4 °C."
    _, scores = scoring("scirecipe", dataset, generator)
    assert scores["k"]["metrics"]["format_gate"] == 1 and scores["k"]["metrics"]["step_m"] == 1
    assert scores["bad"]["metrics"]["format_gate"] == 0 and scores["bad"]["metrics"]["score"] == 0


def test_customplans_run_gives_full_procedures_for_the_study_and_the_pack(llm_server, generator):
    item = {"id": "bread", "goal": "Bake bread", "hint": "I only have a stovetop",
            "steps": ["Mix dough.", "Let it rise.", "Bake in the oven."]}  # fmt: skip

    def responder(req):
        assert req.body["messages"][2]["content"] == (
            "My situation is that I only have a stovetop. List the new set of steps."
        )
        assert (req.body["max_tokens"], req.body["frequency_penalty"]) == (500, 0.1)
        return (
            "Steps:\n1. Mix dough.\n2. Let it rise.\n3. Cook it in a covered pan on the stovetop."
        )

    llm_server.responder = responder
    dataset = imported("customplans", [item], "cp")
    run = drive(make_generation_run(llm_server, dataset, generator, protocol="customplans"))
    assert run.status == "done", run.error
    g = Generation.objects.get(run=run)
    assert g.predicted_steps == [
        "Mix dough.", "Let it rise.", "Cook it in a covered pan on the stovetop."
    ]  # fmt: skip
    assert g.payload["edits"] == [
        {"op": "replace", "index": 3, "text": "Cook it in a covered pan on the stovetop."}
    ]
    _, scores = scoring("customplans", dataset, generator)
    assert scores["bread"]["metrics"]["n_steps_out"] == 3
    assert scores["bread"]["breakdown"]["customized_steps"] == g.predicted_steps
    # ready for the CustomPlans form type's study: the item shows the customized procedure and
    # takes its hint from the imported item
    study = make_form_study("customplans", specs=[{"generation_id": g.pk}])
    view = item_view(item=study.items.get(), participant_id=None, form=study_form(study=study))
    assert (view.goal, list(view.l2), view.context["hint"]) == (
        "Bake bread", g.predicted_steps, "I only have a stovetop",
    )  # fmt: skip


# --- command, API, worker -----------------------------------------------------------------------
def test_run_generation_command_takes_a_protocol(llm_server):
    llm_server.responder = countdown_responder
    imported("longproc-countdown", COUNTDOWN_ITEMS[:1], "cd")
    out = io.StringIO()
    call_command(
        "run_generation", "--generator", "g-cmd", "--dataset", "cd", "--model", "m",
        "--base-url", llm_server.base_url, "--protocol", "longproc-countdown",
        "--protocol-options", '{"buffer": 100}', "--inline", stdout=out,
    )  # fmt: skip
    assert "protocol longproc-countdown" in out.getvalue()
    assert llm_server.requests[0].body["max_tokens"] == 600
    with pytest.raises(CommandError, match="--protocol-options: not JSON"):
        call_command("run_generation", "--generator", "g2", "--dataset", "cd",
                     "--protocol", "procbench", "--protocol-options", "{nope")  # fmt: skip


def test_api_admin_launches_with_a_protocol_and_bad_options_are_400(llm_server, make_user, client):
    dataset = imported("longproc-countdown", COUNTDOWN_ITEMS[:1], "cd")
    boss, reader = make_user("boss", role="admin"), make_user("reader", role="researcher")
    body = {"generator": "api-gen", "dataset": dataset.pk, "model": "m",
            "base_url": llm_server.base_url, "protocol": "longproc-countdown"}  # fmt: skip
    client.force_login(reader)
    assert (
        client.post("/api/generation-runs/", body, content_type="application/json").status_code
        == 403
    )
    client.force_login(boss)
    bad = client.post(
        "/api/generation-runs/", {**body, "protocol_options": {"levle": "2k"}},
        content_type="application/json",
    )  # fmt: skip
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
            run = make_generation_run(
                llm_server, dataset, generator, protocol="procbench",
                protocol_options={"conversion_model": "conv-model"},
            )  # fmt: skip
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
