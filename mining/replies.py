"""Parsing the LLM reply of each mining stage. Pure Python, no Django.

Models wrap JSON in code fences, add prose around it, or write ``"yes"`` for ``true``. Each
``parse_*`` function takes the raw reply text and returns a typed result, or raises
:class:`ReplyError` whose message says what was wrong (and which field), so a bad reply becomes
a recorded per-document outcome instead of a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FINAL_CRITERIA = ("correctness", "sequential", "no_specific_entity", "goal_steps_alignment")

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_NUMBERING = re.compile(r"^\s*(?:step\s*\d{1,2}\s*[:.)-]|\d{1,2}[.)])\s+", re.IGNORECASE)


class ReplyError(ValueError):
    """The reply is not the JSON the stage expects."""


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (bare, inside a code fence, or surrounded by prose)."""
    if text is None or not str(text).strip():
        raise ReplyError("empty reply")
    text = str(text).strip()
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            value = json.loads(cand)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    # Prose around the object: decode from each opening brace in turn.
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ReplyError(f"no JSON object in reply: {_snippet(text)!r}")


def _bool(data: dict[str, Any], key: str) -> bool:
    if key not in data:
        raise ReplyError(f"missing field {key!r}")
    value = data[key]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no"}:
        return False
    raise ReplyError(f"field {key!r} must be a boolean, got {value!r}")


def _str(data: dict[str, Any], key: str, *, required: bool = True) -> str:
    if key not in data or data[key] is None:
        if required:
            raise ReplyError(f"missing field {key!r}")
        return ""
    value = data[key]
    if not isinstance(value, str):
        raise ReplyError(f"field {key!r} must be a string, got {type(value).__name__}")
    return value.strip()


def _str_list(data: dict[str, Any], key: str, *, strip_numbering: bool = False) -> list[str]:
    if key not in data:
        raise ReplyError(f"missing field {key!r}")
    value = data[key]
    if isinstance(value, str):  # a single string of newline-separated items
        value = value.splitlines()
    if not isinstance(value, list):
        raise ReplyError(f"field {key!r} must be a list of strings, got {type(value).__name__}")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ReplyError(f"field {key!r} item {i} must be a string, got {type(item).__name__}")
        item = item.strip()
        if strip_numbering:
            item = _NUMBERING.sub("", item, count=1)
        if item:
            out.append(item)
    return out


@dataclass(frozen=True)
class Extraction:
    has_valid_process: bool
    goal: str
    steps: list[str]


@dataclass(frozen=True)
class FilterVerdict:
    judgment: bool  # True: some excluded category fully applies (the example is dropped)
    reason: str


@dataclass(frozen=True)
class Rewrite:
    goal: str
    steps: list[str]


@dataclass(frozen=True)
class FinalVerdict:
    answers: dict[str, dict[str, str]]  # criterion -> {"answer": "yes"|"no", "reason": str}

    @property
    def passed(self) -> bool:
        return all(self.answers[c]["answer"] == "yes" for c in FINAL_CRITERIA)

    @property
    def failed(self) -> list[str]:
        return [c for c in FINAL_CRITERIA if self.answers[c]["answer"] != "yes"]


def parse_extraction(text: str) -> Extraction:
    data = extract_json_object(text)
    valid = _bool(data, "has_valid_process")
    goal = _str(data, "goal", required=valid)
    steps = _str_list(data, "steps", strip_numbering=True) if valid or "steps" in data else []
    if valid and not goal:
        raise ReplyError("has_valid_process is true but field 'goal' is empty")
    if valid and not steps:
        raise ReplyError("has_valid_process is true but field 'steps' is empty")
    return Extraction(valid, goal, steps)


def parse_filter(text: str) -> FilterVerdict:
    data = extract_json_object(text)
    return FilterVerdict(_bool(data, "judgment"), _str(data, "reason", required=False))


def parse_rewrite(text: str) -> Rewrite:
    data = extract_json_object(text)
    goal = _str(data, "rewritten_goal")
    steps = _str_list(data, "rewritten_steps", strip_numbering=True)
    if not goal:
        raise ReplyError("field 'rewritten_goal' is empty")
    if not steps:
        raise ReplyError("field 'rewritten_steps' is empty")
    return Rewrite(goal, steps)


def parse_resources(text: str) -> list[str]:
    data = extract_json_object(text)
    items = _str_list(data, "resources")
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.casefold()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def parse_final(text: str) -> FinalVerdict:
    data = extract_json_object(text)
    answers: dict[str, dict[str, str]] = {}
    for crit in FINAL_CRITERIA:
        if crit not in data:
            raise ReplyError(f"missing field {crit!r}")
        item = data[crit]
        if isinstance(item, str):
            item = {"answer": item}
        if not isinstance(item, dict):
            raise ReplyError(f"field {crit!r} must be an object with 'answer' and 'reason'")
        answer = item.get("answer")
        if isinstance(answer, bool):
            answer = "yes" if answer else "no"
        if not isinstance(answer, str) or answer.strip().lower() not in {"yes", "no"}:
            raise ReplyError(f'field {crit!r}.answer must be "yes" or "no", got {answer!r}')
        reason = item.get("reason") or ""
        answers[crit] = {"answer": answer.strip().lower(), "reason": str(reason).strip()}
    return FinalVerdict(answers)


# JSON schemas for structured output (``response_format`` json_schema) where the backend has it.
_STR_LIST = {"type": "array", "items": {"type": "string"}}
_VERDICT = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]},
        "reason": {"type": "string"},
    },
    "required": ["answer", "reason"],
    "additionalProperties": False,
}


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "procedures": _obj(
        {"has_valid_process": {"type": "boolean"}, "goal": {"type": "string"}, "steps": _STR_LIST}
    ),
    "filter": _obj({"judgment": {"type": "boolean"}, "reason": {"type": "string"}}),
    "postprocess": _obj({"rewritten_goal": {"type": "string"}, "rewritten_steps": _STR_LIST}),
    "resources": _obj({"resources": _STR_LIST}),
    "final_filter": _obj(dict.fromkeys(FINAL_CRITERIA, _VERDICT)),
}
