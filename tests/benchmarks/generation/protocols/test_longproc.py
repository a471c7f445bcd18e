"""LongProc protocol runs: each task's prompt, token budget (level + buffer, reasoning) and tag
extraction (thinking kept), the finish reason kept for the pack's termination metrics, and an
item the prompt cannot be built from refused when the run is created."""

from __future__ import annotations

import pytest

from benchmarks.models import Generation, GenerationRun
from benchmarks.services.generation_runs import GenerationRunError
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive
from tests.benchmarks.generation.protocols.support import (
    COUNTDOWN_ITEMS,
    countdown_responder,
    imported,
    scoring,
)
from tests.benchmarks.packs.test_protocols import PATH_CONTEXT, TRAVEL_F6, TRAVEL_F6_PLAN

pytestmark = pytest.mark.django_db


def test_longproc_countdown_run_budget_tags_termination_then_scored(llm_server, generator):
    llm_server.responder = countdown_responder
    dataset = imported("longproc-countdown", COUNTDOWN_ITEMS, "cd")
    run = drive(
        make_generation_run(
            llm_server,
            dataset,
            generator,
            protocol="longproc-countdown",
            protocol_options={"buffer": 500},
        )
    )
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
    gold = (
        "<Route>\n"
        "From Fort Worth, take a ferry to Manchester.\n"
        "From Manchester, take a plane to Indianapolis.\n"
        "From Indianapolis, take a ferry to Houston.\n"
        "</Route>"
    )
    item = {
        "id": "p1",
        "context": PATH_CONTEXT,
        "src_city": "Fort Worth",
        "dst_city": "Houston",
        "gold": gold,
    }
    llm_server.responder = lambda req: {"text": f"<think>{gold}</think>"}  # answer in the thinking
    dataset = imported("longproc-path-traversal", [item], "pt")
    run = drive(
        make_generation_run(
            llm_server,
            dataset,
            generator,
            protocol="longproc-path-traversal",
            protocol_options={"level": "8k", "reasoning": True},
        )
    )
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
        {
            "id": "h",
            "level": "2k",
            "html": "<ul><li>Oak</li><li>Elm</li></ul>",
            "task_topic": "trees",
            "target_information": "(1) Name",
            "tsv_header": "Name",
            "gold": "Name\nOak\nElm",
        },
        "Here it is:\n```tsv\nName\nOak\nElm\n```",
        "Based on the HTML webpage above about trees",
        {"f1": 1.0},
    ),
    (
        "longproc-pseudocode-to-code",
        {
            "id": "pc",
            "level": "2k",
            "pseudocode": ["create integer n", "read n", "print n * 2 and a new line"],
            "tests": [{"input": "3\n", "output": "6\n"}, {"input": "21\n", "output": "42\n"}],
        },
        "Here it is:\n```cpp\nint main() {\n  int n;\n  cin >> n;\n  cout << n * 2 << endl;\n}\n```",
        "[PSEUDOCODE]:\n\ncreate integer n\nread n\nprint n * 2 and a new line",
        {"correct": 1},
    ),
    (
        "longproc-tom-tracking",
        {
            "id": "t",
            "level": "2k",
            "story": "Step 0: Carol is in the pantry.\nStep 1: Carol moves to the playroom.",
            "question": "Where does Carol believe the tweezers is?",
            "gold": TOM_GOLD,
        },
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
]


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
            llm_server,
            dataset,
            generator,
            protocol="longproc-path-traversal",
            protocol_options={"level": "2k"},
        )
    with pytest.raises(GenerationRunError, match="unknown option\\(s\\) nope"):
        make_generation_run(
            llm_server, dataset, generator, protocol="procbench", protocol_options={"nope": 1}
        )
    with pytest.raises(GenerationRunError, match="sends chat prompts: use the instruct variant"):
        make_generation_run(
            llm_server,
            dataset,
            generator,
            protocol="longproc-path-traversal",
            variant="base",
            protocol_options={"level": "2k"},
        )
    with pytest.raises(GenerationRunError, match="unknown protocol 'x'"):
        make_generation_run(llm_server, dataset, generator, protocol="x")
    assert not GenerationRun.objects.exists()
