"""CustomPlans' generation protocol (Lal et al., §3 and Fig. 15; notes §2.1): the E2E
customization prompt — a three-turn chat (user: "Write a list of steps for the following
goal\\nGoal: {goal}"; assistant: "Steps:\\n{procedure}"; user: "My situation is that
{customization_hint}. List the new set of steps.") — answered by a full customized procedure,
with the paper's settings: temperature 0, top_p 1, max_tokens 500, frequency_penalty 0.1,
presence_penalty 0. The turns are ``benchmarks/prompts/customplans_e2e.json``, as printed.

The reply's numbered steps are the generation's steps (what the CustomPlans form type's study
shows raters, with the item's hint). So that the ``customplans`` scorer pack reads the output
as it reads an edit-based system's, the customized procedure is also stored as the edits that
turn the original steps into it (:func:`edits_between`: replace / delete / insert anchored to the
original step index); applying them gives back exactly the generated steps. Pure: no Django.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.generation import parse_steps
from benchmarks.packs import diffing
from benchmarks.packs.protocols.base import (
    Protocol,
    ProtocolAnswer,
    ProtocolError,
    ProtocolRequest,
    item_text,
    prompt_text,
)
from core.templating import fill_template

PROMPT_FILE = "customplans_e2e.json"
_STEPS_HEAD = re.compile(r"^\s*(?:new\s+)?steps\s*:\s*$", re.I)


def procedure_text(steps: Sequence[str]) -> str:
    """The original procedure as the assistant turn writes it: ``1. …`` one step a line."""
    return "\n".join(f"{i}. {s.strip()}" for i, s in enumerate(steps, start=1))


def customplans_messages(item: Mapping[str, Any]) -> list[dict[str, str]]:
    goal = item_text(item, "goal")
    hint = item_text(item, "hint", required=False) or item_text(
        item, "customization_hint", required=False
    )
    if hint is None:
        raise ProtocolError("is required: the customization hint", field="hint")
    steps = item.get("steps")
    if not isinstance(steps, list) or not steps or not all(isinstance(s, str) for s in steps):
        raise ProtocolError("must be the original procedure's steps (strings)", field="steps")
    values = {
        "goal": goal.strip(),
        "procedure": procedure_text(steps),
        # "My situation is that {hint}." — a hint written as a sentence loses its final stop
        "customization_hint": hint.strip().rstrip("."),
    }
    turns = json.loads(prompt_text(PROMPT_FILE))
    return [{"role": t["role"], "content": fill_template(t["content"], values)} for t in turns]


def customized_steps(raw: str) -> list[str]:
    """The steps of the reply: its numbered lines (a "Steps:" heading and other lines left
    out), else its bullets, else its lines."""
    lines = [ln for ln in (raw or "").splitlines() if not _STEPS_HEAD.match(ln)]
    return parse_steps("\n".join(lines), profile="lenient").steps


def edits_between(original: Sequence[str], customized: Sequence[str]) -> list[dict[str, Any]]:
    """Edits (``{"op", "index", "text"}``, indices of the original steps) that turn
    ``original`` into ``customized`` under the CustomPlans applier: a changed step is
    ``replace``, a removed one ``delete``, a new one ``insert`` after the last original step
    before it (0: at the start)."""
    edits: list[dict[str, Any]] = []
    anchor = 0
    for row in diffing.align(list(original), list(customized)).rows:
        if row.kind == diffing.EQUAL:
            anchor = row.left_index
        elif row.kind == diffing.CHANGED:
            edits.append({"op": "replace", "index": row.left_index, "text": row.right})
            anchor = row.left_index
        elif row.kind == diffing.DELETED:
            edits.append({"op": "delete", "index": row.left_index, "text": ""})
            anchor = row.left_index
        else:
            edits.append({"op": "insert", "index": anchor, "text": row.right})
    return edits


class CustomPlansProtocol(Protocol):
    name = "customplans"
    pack = "customplans"
    label = "CustomPlans (E2E customization: goal + hint → full customized procedure)"
    prompt_files = (PROMPT_FILE,)
    defaults = {
        "max_tokens": 500,
        "top_p": 1.0,
        "frequency_penalty": 0.1,
        "presence_penalty": 0.0,
    }
    option_types = {
        "max_tokens": (int,),
        "top_p": (int, float),
        "frequency_penalty": (int, float),
        "presence_penalty": (int, float),
    }

    def request(self, item: Mapping[str, Any], options: Mapping[str, Any]) -> ProtocolRequest:
        return ProtocolRequest(
            messages=customplans_messages(item),
            max_tokens=int(options["max_tokens"]),
            temperature=0.0,
            top_p=float(options["top_p"]),
            extra={
                "frequency_penalty": float(options["frequency_penalty"]),
                "presence_penalty": float(options["presence_penalty"]),
            },
        )

    def answer(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolAnswer:
        steps = customized_steps(raw)
        original = item.get("steps") or []
        edits = edits_between(original, steps)  # nothing parsed: every step deleted
        return ProtocolAnswer(
            extracted=steps or None,
            steps=steps[:200],
            payload={
                "edits": edits,
                "protocol": {"name": self.name, "customized_steps": steps},
            },
        )
