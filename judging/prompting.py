"""Judge prompt templates (files in ``judging/prompts/``), the H.3 output schema, and the
rendering of one judge prompt. Pure Python (no Django).

The H.3 template (seed 000 Figure 22) uses ``str.format``-style fields, filled in one pass by
:func:`core.templating.fill_template` (inserted text is never filled again): ``{goal}``,
``{reference_steps}`` and ``{steps}``; steps are numbered ``1. ...`` one per line, and the
prompt ends with the reference implementation's JSON reminder, as ``h2e bench`` sends it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from core.templating import fill_template

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_TEMPLATE = "judge_h3"
JSON_REMINDER = "\n\nReturn only valid json."
_NAME = re.compile(r"^[a-z0-9][a-z0-9_\-]{0,63}$")

# The H.3 output: {"reasoning": str, "critical_failures": [{"failure", "L1_steps", "L2_steps"}]}
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "critical_failures": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "failure": {"type": "string"},
                    "L1_steps": {"type": "array", "items": {"type": "integer"}},
                    "L2_steps": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["failure", "L1_steps", "L2_steps"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["reasoning", "critical_failures"],
    "additionalProperties": False,
}
JUDGE_SCHEMA_NAME = "judge_result"
# the reference's judge decoding when a judge's ``decoding`` leaves them out
DECODING_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 4096}


# the placeholders a judge prompt may use (a text with another one could not be rendered)
PLACEHOLDERS = ("goal", "reference_steps", "steps")
PROMPT_MAX_CHARS = 100_000
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")  # as core.templating


def is_template_name(name: str) -> bool:
    return bool(_NAME.match(name or ""))


def prompt_text_errors(text: str) -> list[str]:
    """Why ``text`` cannot be a judge prompt: empty, too long, or a ``{field}`` other than
    :data:`PLACEHOLDERS` (``{{`` and ``}}`` are literal braces, as in ``str.format``)."""
    if not text.strip():
        return ["the prompt is empty"]
    if len(text) > PROMPT_MAX_CHARS:
        return [f"the prompt has {len(text):,} characters; at most {PROMPT_MAX_CHARS:,}"]
    unknown = sorted(
        {m.group(1) for m in _PLACEHOLDER.finditer(text) if m.group(1) is not None}
        - set(PLACEHOLDERS)
    )
    if unknown:
        known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
        return [
            f"unknown placeholder(s) {', '.join(f'{{{u}}}' for u in unknown)}: a judge prompt "
            f"may use {known} (write {{{{ and }}}} for a literal brace)"
        ]
    return []


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def template_names() -> list[str]:
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.txt"))


@lru_cache(maxsize=32)
def load_template(name: str) -> str:
    if not _NAME.match(name or ""):
        raise ValueError(f"invalid prompt template name {name!r}")
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise ValueError(f"unknown prompt template {name!r}; known: {', '.join(template_names())}")
    return path.read_text(encoding="utf-8")


def steps_text(steps: Sequence[str]) -> str:
    return "\n".join(f"{i + 1}. {s}" for i, s in enumerate(steps))


def clean_steps(steps: Sequence[Any]) -> list[str]:
    return [str(s).strip() for s in steps if str(s).strip()]


def render_judge_prompt(
    *, template: str, goal: str, reference_steps: Sequence[str], steps: Sequence[str]
) -> str:
    filled = fill_template(
        template,
        {
            "goal": goal.strip(),
            "reference_steps": steps_text(clean_steps(reference_steps)),
            "steps": steps_text(clean_steps(steps)),
        },
    )
    return filled + JSON_REMINDER


def content_hash(*, goal: str, reference_steps: Sequence[str], steps: Sequence[str]) -> str:
    """What a judge sees of one item: same hash, same prompt, same judgment (reused). The sha256
    of the compact, key-sorted UTF-8 JSON of its goal and steps (strings only), which orjson
    writes byte for byte as ``json.dumps(..., ensure_ascii=False, sort_keys=True,
    separators=(",", ":"))`` did (hashes stored before stay valid), ~20x faster."""
    payload = orjson.dumps(
        {
            "goal": goal.strip(),
            "reference_steps": clean_steps(reference_steps),
            "steps": clean_steps(steps),
        },
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(payload).hexdigest()


def canonical_judge_id(*, config: dict[str, Any], prompt_text: str) -> str:
    """sha256 of the canonical JSON of the judge's configuration and its prompt's sha256."""
    payload = {
        "judge_id_version": "how2review.judge_id.v1",
        "judge": config,
        "judge_prompt_sha256": text_sha256(prompt_text),
    }
    blob = json.dumps(
        payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
