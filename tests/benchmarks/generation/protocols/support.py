"""What the protocol-run tests share: importing a pack's items, scoring a generator's outputs
with the pack's scoring run, and the items and test-server replies of ProcBench (answers in free
text, converted by an LLM step) and LongProc Countdown."""

from __future__ import annotations

import json
import re

from benchmarks.models import Dataset, Generation, Generator
from benchmarks.services.pack_imports import pack_import
from benchmarks.services.scoring_runs import scoring_run_create
from core.runs import engine
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.packs.test_protocols import DELETECHAR_GOLD, DELETECHAR_TEMPLATE

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


def procbench_items() -> list[dict]:
    return [
        {
            "id": f"dc-{k}",
            "template": DELETECHAR_TEMPLATE,
            "question": f"String: hchouumkd\nSteps: c, u, h, k, d, o, h, m\n(item {k})",
            "gold": DELETECHAR_GOLD,
        }
        for k in (1, 2, 3)
    ]


CONVERTED = {
    "1": {"intermediate": DELETECHAR_GOLD[:-1], "final": "u"},
    "2": {"intermediate": WRONG_THIRD[:-1], "final": "u"},
}


def procbench_run(llm_server, dataset, generator, **fields):
    """A ProcBench protocol run (not started when ``start=False``) whose free-text answers the
    ``conv-model`` converts to the JSON answer format."""
    return make_generation_run(
        llm_server,
        dataset,
        generator,
        protocol="procbench",
        protocol_options={"conversion_model": "conv-model"},
        **fields,
    )


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
