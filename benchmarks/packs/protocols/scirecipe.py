"""SciRecipe / Thoth's generation protocol (seed 004 §3, App. K; notes §4.1): the query and its
Action Library in, the Sketch-and-Fill answer out — ``<think>``, ``<key>`` (one ``Step x:
{"action", "objects", "parameters"}`` line per step), ``<orc>`` (its natural-language
rendering, one imperative sentence per key step) and ``<note>``. Pure: no Django.

The paper prints the construction prompt (Figure 20) and the case studies' "Query / Action
Library / Model Output" (App. K) but not the evaluation prompt itself:
``benchmarks/prompts/scirecipe_generate.txt`` is written for the app from Figure 20's output
format and rules, without its ``<question>`` section (the question is given).

The reply is parsed by the scorer's own parser (:func:`benchmarks.packs.scirecipe.parse_answer`,
the format gate): its structured steps and orc lines are stored for the pages, and the raw
reply stays the pack record's ``prediction``, so the scoring run applies both gates to it.
Item fields: ``query`` (else ``question``, else the item's goal) and ``action_library``
(optional list of verbs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from benchmarks.packs.protocols.base import (
    Protocol,
    ProtocolAnswer,
    ProtocolError,
    ProtocolRequest,
    item_text,
    prompt_text,
)
from benchmarks.packs.scirecipe.parsing import parse_answer
from core.templating import fill_template

PROMPT_FILE = "scirecipe_generate.txt"
NO_LIBRARY = "(any action)"


def scirecipe_prompt(item: Mapping[str, Any]) -> str:
    query = (
        item_text(item, "query", required=False)
        or item_text(item, "question", required=False)
        or item_text(item, "goal")
    )
    library = item.get("action_library")
    if library is None:
        library_text = NO_LIBRARY
    elif isinstance(library, list) and all(isinstance(a, str) for a in library):
        library_text = ", ".join(json.dumps(a, ensure_ascii=False) for a in library) + "."
    else:
        raise ProtocolError("must be a list of strings", field="action_library")
    return fill_template(prompt_text(PROMPT_FILE), {"query": query, "action_library": library_text})


class SciRecipeProtocol(Protocol):
    name = "scirecipe"
    pack = "scirecipe"
    label = "SciRecipe / Thoth (query + action library; <key> steps + <orc> rendering)"
    prompt_files = (PROMPT_FILE,)
    defaults = {"max_tokens": 1024}  # Thoth's max response length (GRPO: 1024)
    option_types = {"max_tokens": (int,)}

    def options(self, options: Any) -> dict[str, Any]:
        out = super().options(options)
        if out["max_tokens"] < 1:
            raise ProtocolError("max_tokens must be positive", field="protocol_options")
        return out

    def request(self, item: Mapping[str, Any], options: Mapping[str, Any]) -> ProtocolRequest:
        return ProtocolRequest(
            messages=[{"role": "user", "content": scirecipe_prompt(item)}],
            max_tokens=int(options["max_tokens"]),
            temperature=0.0,
        )

    def answer(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolAnswer:
        parsed = parse_answer(raw or "")
        steps = [
            {"action": s.action, "objects": list(s.objects), "parameters": list(s.parameters)}
            for s in parsed.steps
        ]
        shown = parsed.orc or [s.text() for s in parsed.steps]
        return ProtocolAnswer(
            extracted={"steps": steps, "orc": parsed.orc} if steps or parsed.orc else None,
            steps=shown[:200],
            payload={
                "protocol": {
                    "name": self.name,
                    "format_ok": parsed.format_ok,
                    "problems": parsed.problems[:20],
                    "steps": steps,
                    "orc": parsed.orc,
                }
            },
        )
