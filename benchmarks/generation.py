"""Generation prompts (seed 000 H.2) and the step parser. Pure Python, no Django.

The prompt files in ``benchmarks/prompts/`` are Figures 20 (base) and 21 (instruct) of the
seed, laid out as the reference implementation's ``prompts/inference_{base,inst}.txt``:
the model gets the goal, the resources and the required step count ``n = |reference steps|``
(D.1). Resources are written as a JSON list (``[]`` when empty), as the reference does.

Decoding (D.1): greedy for non-reasoning endpoints, and the stop sequence ``"\\n\\n"`` for
base models (which otherwise continue with a made-up next example).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from core.templating import fill_template

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
VARIANTS = ("base", "instruct")
PROMPT_FILES = {"base": "generate_base.txt", "instruct": "generate_instruct.txt"}
BASE_STOP = "\n\n"


# --- prompts -------------------------------------------------------------------------------
@cache
def prompt_template(variant: str) -> str:
    if variant not in PROMPT_FILES:
        raise ValueError(f"unknown prompt variant {variant!r}; use one of: {', '.join(VARIANTS)}")
    return (PROMPTS_DIR / PROMPT_FILES[variant]).read_text(encoding="utf-8")


def prompt_sha256(variant: str) -> str:
    return hashlib.sha256(prompt_template(variant).encode("utf-8")).hexdigest()


def resources_text(resources: Sequence[str]) -> str:
    return json.dumps(list(resources), ensure_ascii=False) if resources else "[]"


def build_prompt(*, variant: str, goal: str, resources: Sequence[str], n_steps: int) -> str:
    """The H.2 prompt for one procedure; ``n_steps`` is the reference step count."""
    if n_steps < 1:
        raise ValueError(f"n_steps must be at least 1, got {n_steps}")
    # one pass: text inserted for a placeholder is never filled again (goals may hold "{n}")
    return fill_template(
        prompt_template(variant),
        {"goal": goal.strip(), "resources": resources_text(resources), "n": str(n_steps)},
    )


def decoding_defaults(variant: str) -> dict:
    """Greedy decoding; ``\\n\\n`` stops base models (D.1)."""
    if variant not in PROMPT_FILES:
        raise ValueError(f"unknown prompt variant {variant!r}; use one of: {', '.join(VARIANTS)}")
    return {
        "temperature": 0.0,
        "max_tokens": 4096,  # the reference's generator default (max_new_tokens)
        "stop": [BASE_STOP] if variant == "base" else [],
    }


def apply_stop(text: str, stop: Sequence[str] | None) -> str:
    """Cut ``text`` at the first stop sequence, as a server honouring ``stop`` would.

    Base-model output that starts with blank lines is not cut there (leading whitespace is
    skipped first), so an answer that opens with a newline keeps its steps."""
    if not stop or not text:
        return text
    lead = len(text) - len(text.lstrip())
    body = text[lead:]
    cut = min((i for i in (body.find(s) for s in stop if s) if i >= 0), default=-1)
    return body[:cut] if cut >= 0 else body


# --- parsing -------------------------------------------------------------------------------
_THINK_END = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$")
# "1. x", "1) x", "1: x", "1 - x", "(1) x", "Step 1: x", "**Step 1.** x", "#### 1. x"
_NUMBERED = re.compile(
    r"""^\s*(?:[#>]+\s*)?(?:\*\*|__)?\s*
        (?:step\s*(?P<n1>\d{1,3})\s*(?:[.):\-\u2013\u2014]|(?:\*\*|__))*
          |\(?(?P<n2>\d{1,3})\s*(?:[.):]|\s[-\u2013\u2014])(?!\d))
        \s*(?:\*\*|__)?\s*(?P<body>.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_BULLET = re.compile(r"^\s*(?:[-*+\u2022\u2023\u25e6\u2013\u2014])\s+(?P<body>\S.*)$")


@dataclass(frozen=True)
class ParsedSteps:
    """Steps found in a completion. ``style``: ``numbered``, ``bullets``, ``lines`` or
    ``empty``; ``numbers``: the step numbers as written (numbered style only);
    ``stray_lines``: non-empty lines that were not steps (preambles, closings)."""

    steps: list[str]
    style: str
    numbers: list[int] = field(default_factory=list)
    stray_lines: int = 0

    def count_mismatch(self, n: int) -> int:
        """Steps found minus steps asked for (negative: too few)."""
        return len(self.steps) - n


def final_answer(text: str) -> str:
    """The answer part of a completion: after the last ``</think>``, inside ``<answer>``."""
    if not isinstance(text, str):
        return ""
    t = text
    ends = list(_THINK_END.finditer(t))
    if ends:
        t = t[ends[-1].end() :]
    m = _ANSWER.search(t)
    if m:
        t = m.group(1)
    return t.strip()


def _clean(body: str) -> str:
    body = body.strip()
    # a bold title wrapper left over: "**Preheat** the oven" stays, "**Preheat the oven.**" loses the stars
    if body.startswith("**") and body.endswith("**") and body.count("**") == 2:
        body = body[2:-2].strip()
    return body


PARSE_PROFILES = ("reference", "lenient")
DEFAULT_PARSE_PROFILE = "reference"
_REF_NUMBERED = re.compile(r"\d+\s*[).:\-]?\s*(.*)")


def _parse_steps_reference(text: str) -> ParsedSteps:
    """The reference implementation's rules: keep what follows the last ``</think>`` (an
    unclosed ``<think>`` stays), then the inside of ``<answer>…</answer>`` when both tags are
    there; every stripped line that starts with a digit is a step once its leading number,
    the spaces around it and at most one of ``) . : -`` are removed (``2 cups of milk`` →
    ``cups of milk``; a line with nothing left is dropped). When that finds no step, every
    non-empty line is a step as written (stripped). Never fails; empty text gives no steps."""
    if not isinstance(text, str):
        return ParsedSteps(steps=[], style="empty")
    t = text.strip()
    if "</think>" in t:
        t = t.rsplit("</think>", 1)[1].strip()
    if "<answer>" in t and "</answer>" in t:
        t = t.split("<answer>", 1)[1].split("</answer>", 1)[0].strip()
    lines = [ln.strip() for ln in t.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return ParsedSteps(steps=[], style="empty")
    steps: list[str] = []
    numbers: list[int] = []
    for line in lines:
        m = _REF_NUMBERED.match(line)
        if m and m.group(1).strip():
            steps.append(m.group(1).strip())
            numbers.append(int(re.match(r"\d+", line).group(0)))
    if steps:
        return ParsedSteps(
            steps=steps, style="numbered", numbers=numbers, stray_lines=len(lines) - len(steps)
        )
    return ParsedSteps(steps=lines, style="lines")


def parse_steps(text: str, *, profile: str = DEFAULT_PARSE_PROFILE) -> ParsedSteps:
    """Turn a completion into steps under ``profile``: ``reference`` (the default,
    :func:`_parse_steps_reference`) or ``lenient`` (:func:`_parse_steps_lenient`)."""
    if profile == "reference":
        return _parse_steps_reference(text)
    if profile == "lenient":
        return _parse_steps_lenient(text)
    raise ValueError(f"unknown parse profile {profile!r}; use one of: {', '.join(PARSE_PROFILES)}")


def _parse_steps_lenient(text: str) -> ParsedSteps:
    """Turn a completion into steps (the ``lenient`` profile).

    Numbered lines win (``1.``, ``2)``, ``Step 3:``, ``(4)``, markdown-bold numbers); any other
    lines (a preamble, a closing remark) are stray text and dropped. Without numbers, bullet
    lines are the steps. Without either, every non-empty line is a step (the reference
    implementation's fallback). A numbered line with no text after the number takes the next
    non-marker line as its text. Reasoning (``<think>…</think>``) and code fences are removed
    first. The step count is not forced to ``n``: fewer or more steps than asked are kept, so
    the D.3 step-count mismatch can see them.
    """
    answer = final_answer(text)
    lines = [ln for ln in answer.splitlines() if ln.strip() and not _FENCE.match(ln)]
    if not lines:
        return ParsedSteps(steps=[], style="empty")

    numbered: list[tuple[int, str]] = []
    stray = 0
    pending_number: int | None = None
    for line in lines:
        m = _NUMBERED.match(line)
        if m:
            if pending_number is not None:
                stray += 1  # an empty numbered line followed by another number
            number = int(m.group("n1") or m.group("n2"))
            body = _clean(m.group("body"))
            if body:
                numbered.append((number, body))
                pending_number = None
            else:
                pending_number = number
        elif pending_number is not None:
            numbered.append((pending_number, _clean(line)))
            pending_number = None
        else:
            stray += 1
    if numbered:
        return ParsedSteps(
            steps=[b for _, b in numbered],
            style="numbered",
            numbers=[n for n, _ in numbered],
            stray_lines=stray,
        )

    bullets = [_clean(m.group("body")) for m in map(_BULLET.match, lines) if m]
    if bullets:
        return ParsedSteps(
            steps=[b for b in bullets if b], style="bullets", stray_lines=len(lines) - len(bullets)
        )
    return ParsedSteps(steps=[ln.strip() for ln in lines], style="lines")


def numbered_lines(text: str) -> list[int]:
    """The numbers of the explicitly numbered lines of a completion's final answer, in order."""
    out: list[int] = []
    for line in final_answer(text).splitlines():
        m = _NUMBERED.match(line)
        if m:
            out.append(int(m.group("n1") or m.group("n2")))
    return out
