"""ProcBench's generation protocol (seed 003 §3–4, notes §3): the paper's prompt (the task's
template, then ``[Question]`` and the question), then either

- ``answer_format: "free_text"`` (the paper): the free-text answer is converted into the JSON
  answer format ``{"intermediate": [...], "final": x}`` by an LLM step, as §4 does with GPT-4o and
  Structured Outputs. The conversion model and prompt are the run's options
  (``conversion_model``, default the run's own model; ``conversion_prompt``, default
  ``benchmarks/prompts/procbench_convert.txt``: the paper does not print its conversion prompt,
  so this one is written for the app). The raw answer and the converted one are both stored.
- ``answer_format: "json"``: the model is asked for that JSON itself
  (``procbench_answer_json.txt``, written for the app) and its answer is scored directly.

A conversion (or answer) that is not that JSON stores ``prediction: null``, which the scorer
counts as M = 0 (all four metrics 0), as an unparseable answer is a wrong answer in the paper.
Pure: no Django.
"""

from __future__ import annotations

import json
import re
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
from core.templating import fill_template

ANSWER_FORMATS = ("free_text", "json")
CONVERT_FILE = "procbench_convert.txt"
JSON_FILE = "procbench_answer_json.txt"

_SCALAR = [{"type": "string"}, {"type": "integer"}, {"type": "number"}]
_STATE = {
    "anyOf": [
        *_SCALAR,
        {
            "type": "array",
            "items": {"anyOf": [*_SCALAR, {"type": "array", "items": {"anyOf": _SCALAR}}]},
        },
        {"type": "null"},
    ]
}
# the JSON answer format (Structured Outputs): intermediate states, then the final state
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"intermediate": {"type": "array", "items": _STATE}, "final": _STATE},
    "required": ["intermediate", "final"],
    "additionalProperties": False,
}

_THINK_END = re.compile(r"</think(?:ing)?>", re.I)
_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S | re.I)


def procbench_prompt(item: Mapping[str, Any]) -> str:
    """The paper's prompt: the item's ``prompt`` (the dataset's template + question, as
    released), else ``template`` + "[Question]" + ``question`` (Figures 1 and 8)."""
    prompt = item_text(item, "prompt", required=False)
    if prompt is not None:
        return prompt
    template = item_text(item, "template", required=False)
    question = item_text(item, "question", required=False)
    if template is None or question is None:
        raise ProtocolError(
            "is required (or both 'template' and 'question'): the task's template and question",
            field="prompt",
        )
    return f"{template.strip()}\n\n[Question]\n{question.strip()}"


def parse_answer_json(text: str | None) -> dict[str, Any] | None:
    """The JSON answer in a reply: the whole text after any thinking, else its last fenced
    block, else its last ``{…}`` object that parses; ``{"intermediate": [...], "final": x}``
    (a bare list is read as intermediates + final). None when there is none."""
    if not isinstance(text, str):
        return None
    ends = list(_THINK_END.finditer(text))
    body = text[ends[-1].end() :] if ends else text
    candidates = [body.strip(), *reversed(_FENCED.findall(body))]
    starts = [m.start() for m in re.finditer(r"\{", body)]
    candidates += [body[s : body.rfind("}") + 1] for s in reversed(starts)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        shaped = _shaped(value)
        if shaped is not None:
            return shaped
    return None


def _shaped(value: Any) -> dict[str, Any] | None:
    if isinstance(value, list) and value:
        return {"intermediate": value[:-1], "final": value[-1]}
    if isinstance(value, Mapping) and "final" in value:
        inter = value.get("intermediate", [])
        if isinstance(inter, list):
            return {"intermediate": inter, "final": value["final"]}
    return None


def _steps(answer: Mapping[str, Any] | None) -> list[str]:
    if answer is None:
        return []
    states = [*answer["intermediate"], answer["final"]]
    return [s if isinstance(s, str) else json.dumps(s, ensure_ascii=False) for s in states][:200]


class ProcBenchProtocol(Protocol):
    name = "procbench"
    pack = "procbench"
    label = "ProcBench (template + question; free text converted to JSON, or JSON)"
    prompt_files = (CONVERT_FILE, JSON_FILE)
    defaults = {
        "answer_format": "free_text",
        "conversion_model": None,
        "conversion_prompt": None,
        "conversion_max_tokens": 4096,
    }
    option_types = {
        "answer_format": (str,),
        "conversion_model": (str, type(None)),
        "conversion_prompt": (str, type(None)),
        "conversion_max_tokens": (int,),
    }

    def options(self, options: Any) -> dict[str, Any]:
        out = super().options(options)
        if out["answer_format"] not in ANSWER_FORMATS:
            raise ProtocolError(
                f"answer_format must be one of {', '.join(ANSWER_FORMATS)}",
                field="protocol_options",
            )
        template = out["conversion_prompt"]
        if template is not None:
            try:
                fill_template(template, {"prompt": "", "answer": ""})
            except KeyError as exc:
                raise ProtocolError(
                    f"conversion_prompt: {exc.args[0]}; use {{prompt}} and {{answer}}",
                    field="protocol_options",
                ) from None
            if "{answer}" not in template:
                raise ProtocolError(
                    "conversion_prompt must contain {answer}", field="protocol_options"
                )
        if out["conversion_max_tokens"] < 1:
            raise ProtocolError("conversion_max_tokens must be positive", field="protocol_options")
        return out

    def request(self, item: Mapping[str, Any], options: Mapping[str, Any]) -> ProtocolRequest:
        prompt = procbench_prompt(item)
        if options["answer_format"] == "json":
            prompt = fill_template(prompt_text(JSON_FILE), {"prompt": prompt})
        return ProtocolRequest(messages=[{"role": "user", "content": prompt}], temperature=0.0)

    def needs_conversion(self, options: Mapping[str, Any]) -> bool:
        return options["answer_format"] == "free_text"

    def conversion_template(self, options: Mapping[str, Any]) -> str:
        return options.get("conversion_prompt") or prompt_text(CONVERT_FILE)

    def conversion_request(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolRequest:
        content = fill_template(
            self.conversion_template(options), {"prompt": procbench_prompt(item), "answer": raw}
        )
        return ProtocolRequest(
            messages=[{"role": "user", "content": content}],
            max_tokens=int(options["conversion_max_tokens"]),
            temperature=0.0,
            json_schema=ANSWER_SCHEMA,
            json_schema_name="procbench_answer",
        )

    def answer(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolAnswer:
        """The JSON-format answer scored directly (``answer_format: "json"``)."""
        parsed = parse_answer_json(raw)
        return ProtocolAnswer(
            extracted=parsed,
            steps=_steps(parsed),
            payload={
                "prediction": parsed,
                "protocol": {"name": self.name, "answer_format": "json", "converted": parsed},
            },
        )

    def converted(
        self, raw: str, conversion: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolAnswer:
        """The free-text answer after the conversion step: the raw answer stays in the
        generation's ``model_completion``; the conversion's reply and its parse are kept."""
        parsed = parse_answer_json(conversion)
        return ProtocolAnswer(
            extracted=parsed,
            steps=_steps(parsed),
            payload={
                "prediction": parsed,
                "protocol": {
                    "name": self.name,
                    "answer_format": "free_text",
                    "conversion_raw": conversion,
                    "converted": parsed,
                },
            },
        )
