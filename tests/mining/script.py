"""A scripted How2Mine 'LLM' for the local OpenAI-compatible test server.

The stage is read from the request's json_schema name (how2mine_<stage>); what to answer is
steered by markers in the document's first line (which becomes the extracted goal):

NOPROC (no process), BADJSON (extraction reply is prose), SHORT (3 steps), REPEAT (repetitive
steps), FILTERME (LLM filter excludes it), FINALNO (final validation fails correctness),
BADFINAL (final reply misses fields).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter

STEP_VERBS = [
    "Preheat",
    "Measure",
    "Combine",
    "Knead",
    "Shape",
    "Bake",
    "Cool",
    "Slice",
    "Wrap",
    "Store",
]


def _goal_line(prompt: str) -> str:
    m = re.search(r"Goal:\s*\n(.*?)\n", prompt)
    return m.group(1).strip() if m else ""


def _doc_first_line(prompt: str) -> str:
    m = re.search(r"<start of document>\n(.*?)(?:\n|$)", prompt)
    return m.group(1).strip() if m else ""


class MiningScript:
    def __init__(self) -> None:
        self.calls: Counter = Counter()
        self.by_goal: Counter = Counter()
        # every request by (stage, its document's first line or goal): a count above 1 is a
        # request sent again
        self.requests: Counter = Counter()
        self.lock = threading.Lock()

    @staticmethod
    def stage_of(req) -> str:
        rf = req.body.get("response_format") or {}
        name = (rf.get("json_schema") or {}).get("name", "")
        return name.removeprefix("how2mine_")

    def __call__(self, req):
        stage = self.stage_of(req)
        prompt = req.prompt_text
        with self.lock:
            self.calls[stage] += 1
            self.requests[stage, _doc_first_line(prompt) or _goal_line(prompt)] += 1
        return getattr(self, stage)(prompt)

    def procedures(self, prompt: str):
        first = _doc_first_line(prompt)
        with self.lock:
            self.by_goal[first] += 1
        if "NOPROC" in first:
            return json.dumps({"has_valid_process": False, "goal": "", "steps": []})
        if "BADJSON" in first:
            return "Sure! Here is the process: first you do the thing, then the other."
        if "SHORT" in first:
            steps = [f"{v} the item for {first}" for v in STEP_VERBS[:3]]
        elif "REPEAT" in first:
            steps = ["stir the pot and stir the pot again"] * 6
        else:
            steps = [
                f"{v} the {w} carefully"
                for v, w in zip(
                    STEP_VERBS[:6], ["oven", "flour", "dough", "loaf", "tray", "rack"], strict=True
                )
            ]
        reply = {"has_valid_process": True, "goal": first, "steps": steps}
        return {
            "text": "```json\n" + json.dumps(reply) + "\n```",
            "prompt_tokens": 1000,
            "completion_tokens": 100,
        }

    def filter(self, prompt: str):
        goal = _goal_line(prompt)
        if "FILTERME" in goal:
            return json.dumps({"judgment": True, "reason": "Named-entity Focused"})
        return {
            "text": json.dumps({"judgment": False, "reason": ""}),
            "prompt_tokens": 800,
            "completion_tokens": 10,
        }

    def postprocess(self, prompt: str):
        goal = _goal_line(prompt)
        steps = re.findall(
            r"^\d+\. (.*)$", prompt.split("Steps:", 1)[1].split("## Task", 1)[0], re.MULTILINE
        )
        return json.dumps({"rewritten_goal": f"Rewritten: {goal}", "rewritten_steps": steps})

    def resources(self, prompt: str):
        return json.dumps({"resources": ["oven", "flour", "Flour", "tray"]})

    def final_filter(self, prompt: str):
        goal = _goal_line(prompt)
        if "BADFINAL" in goal:
            return json.dumps({"correctness": {"answer": "yes", "reason": ""}})
        ok = {"answer": "yes", "reason": ""}
        bad = {"answer": "no", "reason": "The steps skip baking."}
        return json.dumps(
            {
                "correctness": bad if "FINALNO" in goal else ok,
                "sequential": ok,
                "no_specific_entity": ok,
                "goal_steps_alignment": ok,
            }
        )
