"""Generation protocols, pure: each paper's prompt, budget and answer extraction,
on the worked examples of the seed notes, and the answers stored read by the packs' scorers
through the same record the scoring runs rebuild (:func:`benchmarks.formats.packs.pack_record`)."""

from __future__ import annotations

import json

import pytest

from benchmarks.formats.packs import pack_record
from benchmarks.packs.customplans import apply_edits, edits_from_json
from benchmarks.packs.longproc_validators import parse_travel_problem
from benchmarks.packs.protocols import PROTOCOL_NAMES, ProtocolError, get_protocol
from benchmarks.packs.protocols.customplans import edits_between
from benchmarks.packs.protocols.longproc import (
    REASONING_BUDGET,
    longproc_budget,
    longproc_prompt,
    travel_problem_text,
)
from benchmarks.packs.protocols.procbench import parse_answer_json
from benchmarks.packs.registry import get_pack
from tests.support.purity import django_imports, source_files

# --- the worked examples ---------------------------------------------------------------------
DELETECHAR_TEMPLATE = (
    "Remove letters in a given list from a given string step by step; at each step remove a "
    "single letter starting from the first element of the list. Provide the final string along "
    "with the intermediate states after each step in the form of a list. Do not include the "
    "initial state and final state in the list of intermediate states."
)
DELETECHAR_QUESTION = "String: hchouumkd\nSteps: c, u, h, k, d, o, h, m"
DELETECHAR_GOLD = ["hhouumkd", "hhoumkd", "houmkd", "houmd", "houm", "hum", "um", "u"]
PATH_CONTEXT = "\n".join(
    [
        "Fort Worth is a lively city. You can travel from Fort Worth to Manchester by ferry.",
        "Manchester is a lively city. You can travel from Manchester to Indianapolis by plane.",
        "Indianapolis is a lively city. You can travel from Indianapolis to Houston by ferry.",
    ]
)
TRAVEL_F6 = {
    "total_days": 20,
    "cities": [
        {"name": "Hamburg", "days": 7},
        {"name": "Munich", "days": 6},
        {"name": "Manchester", "days": 2, "fixed": [19, 20]},
        {"name": "Lyon", "days": 2, "fixed": [13, 14]},
        {"name": "Split", "days": 7},
    ],
    "flights": [
        ["Split", "Munich"], ["Munich", "Manchester"], ["Hamburg", "Manchester"],
        ["Hamburg", "Munich"], ["Split", "Lyon"], ["Lyon", "Munich"], ["Hamburg", "Split"],
        ["Manchester", "Split"],
    ],
}  # fmt: skip
TRAVEL_F6_PLAN = """<Plan>
**Day 1-7:** Arriving in Hamburg and visit Hamburg for 7 days.
**Day 7:** Fly from Hamburg to Split.
**Day 7-13:** Visit Split for 7 days.
**Day 13:** Fly from Split to Lyon.
**Day 13-14:** Visit Lyon for 2 days.
**Day 14:** Fly from Lyon to Munich.
**Day 14-19:** Visit Munich for 6 days.
**Day 19:** Fly from Munich to Manchester.
**Day 19-20:** Visit Manchester for 2 days.
</Plan>"""
SCIRECIPE_K = """<think>Centrifuge, remove the wrong solution, resuspend, filter.</think>
<key>
Step 1: {"action": "centrifuge", "objects": ["nuclei suspension"], "parameters": ["500xg", "5 min", "4 °C"]}
Step 2: {"action": "remove", "objects": ["supernatant"], "parameters": ["carefully"]}
Step 3: {"action": "resuspend", "objects": ["nuclei pellet"], "parameters": ["1 ml", "wash solution 2"]}
Step 4: {"action": "filter", "objects": ["nuclei suspension"], "parameters": ["40 µm strainer"]}
</key>
<orc>
Step 1: Centrifuge the nuclei suspension at 500xg for 5 min at 4 °C.
Step 2: Remove the supernatant carefully.
Step 3: Resuspend the nuclei pellet in 1 ml wash solution 2.
Step 4: Filter the nuclei suspension through a 40 µm strainer.
</orc>
<note>Keep nuclei on ice.</note>"""
SCIRECIPE_GOLD = [
    {"action": "centrifuge", "objects": ["nuclei suspension"], "parameters": ["500xg", "5 min"]},
    {"action": "remove", "objects": ["supernatant"], "parameters": []},
    {"action": "resuspend", "objects": ["nuclei pellet"], "parameters": ["wash solution 2"]},
    {"action": "filter", "objects": ["nuclei suspension"], "parameters": ["40 µm strainer"]},
]


def scored(pack: str, item: dict, raw: str, payload: dict, finish_reason: str = "stop"):
    """The pack's score of a stored output, through the record a scoring run rebuilds."""
    gold = {k: v for k, v in item.items() if k not in ("id", "goal")}
    record = pack_record(
        item_id=item["id"], gold=gold, output=payload, model_completion=raw,
        finish_reason=finish_reason, pack=pack,
    )  # fmt: skip
    return get_pack(pack).score(record)


def test_protocols_are_pure():
    from benchmarks.packs import protocols

    names = {p.name for p in source_files(protocols)}
    assert {"base.py", "longproc.py", "procbench.py", "scirecipe.py", "customplans.py"} <= names
    assert django_imports(protocols) == {}


def test_every_pack_has_a_protocol_named_after_it():
    assert PROTOCOL_NAMES[0] == "how2everything" and get_protocol("how2everything") is None
    for name in PROTOCOL_NAMES[1:]:
        assert get_protocol(name).pack == name
        get_pack(name)  # a registered scorer pack scores its outputs
    with pytest.raises(ProtocolError, match="unknown protocol 'nope'"):
        get_protocol("nope")


# --- LongProc ----------------------------------------------------------------------------------
def test_longproc_budget_is_the_level_plus_the_buffer_or_16k_for_reasoning_models():
    assert longproc_budget("0.5k") == 1500
    assert longproc_budget("2K", buffer=500) == 2500
    assert longproc_budget("8k", buffer=2000) == 10_000  # the paper's Countdown 8K instruct budget
    assert longproc_budget(8000, reasoning=True) == REASONING_BUDGET == 16384
    with pytest.raises(ProtocolError, match=r"field 'level': must be one of 0\.5k, 2k, 8k"):
        longproc_budget("4x")


def test_countdown_prompt_is_h4_and_the_answer_keeps_the_thinking():
    proto = get_protocol("longproc-countdown")
    item = {"id": "f5", "goal": "g", "numbers": [44, 48, 35, 6], "target": 25, "level": "0.5k"}
    opts = proto.options({"few_shot": "EXAMPLE-TRACE"})
    req = proto.request(item, opts)
    prompt = req.messages[0]["content"]
    assert prompt.startswith("[TASK]\nYou will be given four numbers and a target number")
    assert "Numbers: 44, 48, 35, 6\nTarget: 25" in prompt and "EXAMPLE-TRACE" in prompt
    assert "Please mark your answer with <Solution> and </Solution> tags." in prompt
    assert (req.max_tokens, req.temperature) == (1500, 0.0)
    # the formatted answer written inside the thinking is found: not stripped (the paper)
    raw = (
        "<think>48 - 44 = 4 ... <Solution>\n48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25\n</Solution>"
        "</think>I found it above."
    )
    answer = proto.answer(raw, item, opts)
    assert answer.extracted.strip().splitlines() == ["48 - 44 = 4", "35 - 4 = 31", "31 - 6 = 25"]
    assert answer.payload["protocol"]["thinking"] is True
    assert scored("longproc-countdown", item, raw, answer.payload).metrics == {
        "correct": 1,
        "terminated": 1,
    }
    cut = scored("longproc-countdown", item, "<think>48 - 44", {}, finish_reason="length")
    assert cut.metrics == {"correct": 0, "terminated": 0}


def test_path_traversal_prompt_is_h3_and_route_extraction_matches_the_scorer():
    item = {
        "id": "p1", "goal": "g", "context": PATH_CONTEXT, "src_city": "Fort Worth",
        "dst_city": "Houston",
        "gold": "<Route>\nFrom Fort Worth, take a ferry to Manchester.\nFrom Manchester, take a "
        "plane to Indianapolis.\nFrom Indianapolis, take a ferry to Houston.\n</Route>",
    }  # fmt: skip
    prompt = longproc_prompt(item, "path-traversal", "0.5k")
    assert "[PROBLEM]\n" + PATH_CONTEXT in prompt
    assert "Now find the route from Fort Worth to Houston based on the information above." in prompt
    assert prompt.count("<Route>") >= 2  # the format and the worked example of H.3
    proto = get_protocol("longproc-path-traversal")
    raw = "Let me follow the links.\n" + item["gold"].replace(
        "ferry to Houston", "Ferry to Houston"
    )
    answer = proto.answer(raw, item, proto.options({"level": "0.5k"}))
    assert answer.steps[0] == "From Fort Worth, take a ferry to Manchester."
    assert len(answer.steps) == 3
    assert scored("longproc-path-traversal", item, raw, answer.payload).metrics["correct"] == 1
    with pytest.raises(ProtocolError, match="field 'dst_city': is required"):
        longproc_prompt({"context": "x", "src_city": "A"}, "path-traversal", "2k")
    with pytest.raises(ProtocolError, match="field 'level'"):
        longproc_prompt(item, "path-traversal", "3q")


def test_travel_problem_written_from_the_scorer_fields_parses_back_and_f6_plan_scores():
    text = travel_problem_text(**TRAVEL_F6)
    total, cities, flights = parse_travel_problem(text)
    assert total == 20
    assert {(c.name, c.days, c.fixed) for c in cities} == {
        ("Hamburg", 7, None), ("Munich", 6, None), ("Manchester", 2, (19, 20)),
        ("Lyon", 2, (13, 14)), ("Split", 7, None),
    }  # fmt: skip
    assert flights == [tuple(f) for f in TRAVEL_F6["flights"]]
    proto = get_protocol("longproc-travel")
    item = {"id": "f6", "goal": "g", "level": "2k", **TRAVEL_F6}
    req = proto.request(item, proto.options({"reasoning": True}))
    assert text in req.messages[0]["content"] and req.max_tokens == 16384
    assert "<Solving Procedure> and </Solving Procedure> tags" in req.messages[0]["content"]
    raw = "<Solving Procedure>...</Solving Procedure>\n" + TRAVEL_F6_PLAN
    answer = proto.answer(raw, item, proto.options({}))
    assert answer.steps[0] == "**Day 1-7:** Arriving in Hamburg and visit Hamburg for 7 days."
    assert scored("longproc-travel", item, raw, answer.payload).metrics["correct"] == 1
    # G.6: a flight that is not in the list
    bad = raw.replace("Fly from Split to Lyon", "Fly from Barcelona to Lyon")
    assert (
        scored("longproc-travel", item, bad, proto.answer(bad, item, {}).payload).metrics["correct"]
        == 0
    )


def test_tom_and_html_prompts_and_extraction():
    tom = get_protocol("longproc-tom-tracking")
    item = {"id": "t", "goal": "g", "level": "2k", "story": "Step 0: Leon is in the pantry.",
            "question": "Where does Leon believe the tweezers is?"}  # fmt: skip
    prompt = tom.request(item, tom.options({})).messages[0]["content"]
    assert prompt.endswith(
        "Step 0: Leon is in the pantry.\n\nWhere does Leon believe the tweezers is?\n"
    )
    assert "Final Answer: <PLACE>" in prompt and "{Leon" not in prompt
    raw = "Sure.\n- Step 1: (x) {a}\n- Step 2: (y) {b}\nFinal Answer: the rack\nThanks"
    assert tom.answer(raw, item, {}).extracted.splitlines()[-1] == "Final Answer: the rack"
    html = get_protocol("longproc-html-to-tsv")
    item = {"id": "h", "goal": "g", "level": "0.5k", "html": "<ul><li>A</li></ul>",
            "task_topic": "trees", "target_information": "(1) Name", "tsv_header": "Name"}  # fmt: skip
    prompt = html.request(item, html.options({})).messages[0]["content"]
    assert "about trees, extract the following properties" in prompt
    assert "```tsv\nName\n{Your TSV output}\n```" in prompt and 'a tab "\t"' in prompt
    answer = html.answer("<think>x</think>\n```tsv\nName\nA\n```", item, {})
    assert answer.extracted == "Name\nA\n"
    item["gold"] = "Name\nA"
    assert scored("longproc-html-to-tsv", item, "```tsv\nName\nA\n```", {}).metrics["f1"] == 1.0


def test_longproc_options_and_missing_level_are_refused_naming_them():
    proto = get_protocol("longproc-countdown")
    with pytest.raises(ProtocolError, match="unknown option\\(s\\) levle for longproc-countdown"):
        proto.options({"levle": "2k"})
    with pytest.raises(ProtocolError, match="buffer must be an integer"):
        proto.options({"buffer": "1k"})
    with pytest.raises(ProtocolError, match="level must be one of"):
        proto.options({"level": "9z"})
    with pytest.raises(ProtocolError, match="field 'level': is required"):
        proto.request({"numbers": [1, 2], "target": 3}, proto.options({}))


# --- ProcBench ---------------------------------------------------------------------------------
def test_procbench_prompt_is_template_then_question():
    proto = get_protocol("procbench")
    item = {"id": "dc", "template": DELETECHAR_TEMPLATE, "question": DELETECHAR_QUESTION,
            "gold": DELETECHAR_GOLD}  # fmt: skip
    req = proto.request(item, proto.options({}))
    assert (
        req.messages[0]["content"] == f"{DELETECHAR_TEMPLATE}\n\n[Question]\n{DELETECHAR_QUESTION}"
    )
    released = {"prompt": "P as released", "gold": DELETECHAR_GOLD}
    assert proto.request(released, proto.options({})).messages[0]["content"] == "P as released"
    as_json = proto.request(item, proto.options({"answer_format": "json"})).messages[0]["content"]
    assert as_json.startswith(DELETECHAR_TEMPLATE) and '{"intermediate": [' in as_json
    with pytest.raises(ProtocolError, match="field 'prompt': is required"):
        proto.request({"gold": [1]}, proto.options({}))


@pytest.mark.parametrize(
    "states, expected",
    [
        (DELETECHAR_GOLD, {"pml": 8, "pa": 1.0, "sm": 1, "fm": 1}),
        (["hhouumkd", "hhoumkd", "hoummkd", *DELETECHAR_GOLD[3:]], {"pml": 2, "pa": 0.25, "sm": 0, "fm": 1}),
        ([*DELETECHAR_GOLD, "u", "u"], {"pml": 8, "pa": 0.8, "sm": 0, "fm": 1}),
        (["u"], {"pml": 0, "pa": 0.0, "sm": 0, "fm": 1}),
    ],
)  # fmt: skip
def test_procbench_conversion_stores_raw_and_converted_and_scores_as_the_paper(states, expected):
    proto = get_protocol("procbench")
    opts = proto.options({"conversion_model": "gpt-4o"})
    item = {"id": "dc", "template": DELETECHAR_TEMPLATE, "question": DELETECHAR_QUESTION,
            "gold": DELETECHAR_GOLD}  # fmt: skip
    raw = "Step 1: hhouumkd ... so the final string is u."
    assert proto.needs_conversion(opts)
    creq = proto.conversion_request(raw, item, opts)
    content = creq.messages[0]["content"]
    assert f"[Answer]\n{raw}" in content and DELETECHAR_QUESTION in content
    assert creq.json_schema["required"] == ["intermediate", "final"]
    reply = json.dumps({"intermediate": states[:-1], "final": states[-1]})
    answer = proto.converted(raw, reply, item, opts)
    assert answer.payload["prediction"] == {"intermediate": states[:-1], "final": states[-1]}
    assert answer.payload["protocol"]["conversion_raw"] == reply
    assert answer.steps == states
    assert scored("procbench", item, raw, answer.payload).metrics == expected


def test_procbench_unparseable_answer_scores_zero_and_json_answers_parse_directly():
    proto = get_protocol("procbench")
    item = {"id": "dc", "gold": DELETECHAR_GOLD, "prompt": "p"}
    answer = proto.converted("raw", "I cannot convert this", item, proto.options({}))
    assert answer.payload["prediction"] is None and answer.steps == []
    assert scored("procbench", item, "raw", answer.payload).metrics == {
        "pml": 0, "pa": 0.0, "sm": 0, "fm": 0,
    }  # fmt: skip
    text = '<think>{"final": "x"}</think>Answer:\n```json\n{"intermediate": [1, [2, 3]], "final": 4}\n```'
    assert parse_answer_json(text) == {"intermediate": [1, [2, 3]], "final": 4}
    assert parse_answer_json('["a", "b"]') == {"intermediate": ["a"], "final": "b"}
    assert parse_answer_json("no json") is None
    direct = proto.answer(
        json.dumps(DELETECHAR_GOLD), item, proto.options({"answer_format": "json"})
    )
    assert scored("procbench", item, "", direct.payload).metrics["sm"] == 1
    with pytest.raises(ProtocolError, match="answer_format must be one of free_text, json"):
        proto.options({"answer_format": "xml"})
    with pytest.raises(ProtocolError, match="conversion_prompt must contain \\{answer\\}"):
        proto.options({"conversion_prompt": "convert {prompt}"})
    with pytest.raises(ProtocolError, match="no value"):
        proto.options({"conversion_prompt": "{answer} {other}"})


# --- SciRecipe ---------------------------------------------------------------------------------
def test_scirecipe_prompt_and_structured_answer_parsed_as_the_scorer():
    proto = get_protocol("scirecipe")
    item = {"id": "k", "goal": "g", "query": "Replace wash solution 1 with 2.",
            "action_library": ["centrifuge", "remove", "resuspend", "filter", "dry"],
            "gold": SCIRECIPE_GOLD}  # fmt: skip
    req = proto.request(item, proto.options({}))
    prompt = req.messages[0]["content"]
    assert prompt.endswith(
        'Query:\nReplace wash solution 1 with 2.\n\nAction Library:\n"centrifuge", "remove", '
        '"resuspend", "filter", "dry".\n'
    )
    assert 'Step 1: {"action": "detach"' in prompt and req.max_tokens == 1024
    answer = proto.answer(SCIRECIPE_K, item, proto.options({}))
    record = answer.payload["protocol"]
    assert record["format_ok"] is True and record["problems"] == []
    assert [s["action"] for s in record["steps"]] == ["centrifuge", "remove", "resuspend", "filter"]
    assert record["steps"][0]["parameters"] == ["500xg", "5 min", "4 °C"]
    assert answer.steps[1] == "Remove the supernatant carefully."
    metrics = scored("scirecipe", item, SCIRECIPE_K, answer.payload).metrics
    assert (metrics["format_gate"], metrics["step_m"], metrics["order_s"]) == (1, 1, 1)
    broken = proto.answer("<key>Step 1: wash</key>", item, {}).payload["protocol"]
    assert broken["format_ok"] is False and broken["steps"] == []
    assert scored("scirecipe", item, "<key>Step 1: wash</key>", {}).metrics["score"] == 0


# --- CustomPlans -------------------------------------------------------------------------------
def test_customplans_prompt_is_the_e2e_chat_of_figure_15():
    proto = get_protocol("customplans")
    item = {"id": "c", "goal": "Bake bread", "hint": "I only have a stovetop.",
            "steps": ["Mix dough.", "Bake in the oven."]}  # fmt: skip
    req = proto.request(item, proto.options({}))
    assert req.messages == [
        {"role": "user", "content": "Write a list of steps for the following goal\nGoal: Bake bread"},
        {"role": "assistant", "content": "Steps:\n1. Mix dough.\n2. Bake in the oven."},
        {"role": "user", "content": "My situation is that I only have a stovetop. List the new set of steps."},
    ]  # fmt: skip
    assert (req.temperature, req.top_p, req.max_tokens) == (0.0, 1.0, 500)
    assert req.extra == {"frequency_penalty": 0.1, "presence_penalty": 0.0}
    with pytest.raises(ProtocolError, match="field 'hint'"):
        proto.request({**item, "hint": None}, proto.options({}))


def test_customplans_full_procedure_becomes_edits_the_pack_applies_back():
    # the notes' worked example: [s1, s2, s3] customized to [s1, X, s3, Y]
    edits = edits_between(["s1", "s2", "s3"], ["s1", "X", "s3", "Y"])
    assert apply_edits(["s1", "s2", "s3"], edits_from_json(edits)).steps == ["s1", "X", "s3", "Y"]
    for original, new in [
        (["a", "b", "c"], ["z", "a", "c", "d", "e"]),
        (["a", "b"], []),
        (["a"], ["a"]),
        (["a", "b", "c", "d"], ["b", "x", "y", "d", "a"]),
    ]:
        assert apply_edits(original, edits_from_json(edits_between(original, new))).steps == new
    proto = get_protocol("customplans")
    item = {"id": "c", "goal": "Bake bread", "hint": "I only have a stovetop",
            "steps": ["Mix dough.", "Let it rise.", "Bake in the oven."]}  # fmt: skip
    raw = "Steps:\n1. Mix dough.\n2. Let it rise.\n3. Cook it in a covered pan on the stovetop.\n4. Let it cool."
    answer = proto.answer(raw, item, proto.options({}))
    assert answer.steps == [
        "Mix dough.", "Let it rise.", "Cook it in a covered pan on the stovetop.", "Let it cool.",
    ]  # fmt: skip
    result = scored("customplans", item, raw, answer.payload)
    assert result.breakdown["customized_steps"] == answer.steps
    assert (result.metrics["n_edits"], result.metrics["n_steps_out"]) == (2, 4)
