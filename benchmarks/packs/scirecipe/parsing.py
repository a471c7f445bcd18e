"""SciRecipe's Sketch-and-Fill answer: the format gate (``<think> <key> <orc> <note>`` in order,
``Step x: {json}`` key lines), the structured steps and the consistency gate (App. C.1).
Pure: no Django imports."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.packs.scirecipe.options import ScoreOptions

SECTIONS = ("think", "key", "orc", "note")
_STEP_LINE = re.compile(r"^\s*step\s*(\d+)\s*[:.]\s*(.*?)\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```[\w-]*\s*$")
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻₊₋", "01234567890123456789+-+-")
_UNITS = (
    (re.compile(r"[µμ]\s*([lgm])\b"), r"u\1"),  # µl, μg, µm → ul, ug, um
    (re.compile(r"[°º˚]\s*([cf])\b"), r"deg\1"),  # 37 °c, 37°C, 37 ºc → 37 degc
    (re.compile(r"\bdegrees?\s+(celsius|c)\b"), "degc"),
    (re.compile(r"(\d)\s+(?=[a-z%])"), r"\1"),  # 10 min → 10min, 4 % → 4%
)


@dataclass(frozen=True)
class Step:
    """One structured step yi = (ai, Oi, Pi)."""

    action: str
    objects: tuple[str, ...] = ()
    parameters: tuple[str, ...] = ()

    def text(self) -> str:
        return " ".join((self.action, *self.objects, *self.parameters)).strip()


@dataclass
class ParsedAnswer:
    """A raw model answer after the format gate: its key steps and orc lines."""

    format_ok: bool
    steps: list[Step] = field(default_factory=list)
    step_numbers: list[int] = field(default_factory=list)
    orc: list[str] = field(default_factory=list)
    orc_numbers: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def normalize(text: str) -> str:
    """Case folding, unit standardisation, sub/superscripts removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text.translate(_SUBSCRIPTS)).casefold()
    for pattern, repl in _UNITS:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def step_from_mapping(value: Any, where: str) -> Step:
    """A ``{"action", "objects", "parameters"}`` mapping → :class:`Step`; ``ValueError`` names
    ``where`` and the field."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: must be an object with action, objects, parameters")
    action = value.get("action")
    if not isinstance(action, str) or not action.strip():
        raise ValueError(f"{where}.action: must be a non-empty string")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("objects", "parameters"):
        items = value.get(key, [])
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ValueError(f"{where}.{key}: must be a list of strings")
        lists[key] = tuple(i.strip() for i in items if i.strip())
    return Step(action.strip(), lists["objects"], lists["parameters"])


def _section_bodies(text: str) -> tuple[dict[str, str], list[str]]:
    bodies: dict[str, str] = {}
    problems: list[str] = []
    pos = 0
    for name in SECTIONS:
        opening = re.compile(rf"<{name}>", re.IGNORECASE).search(text, pos)
        if opening is None:
            problems.append(f"<{name}> missing or out of order")
            continue
        closing = re.compile(rf"</{name}>", re.IGNORECASE).search(text, opening.end())
        if closing is None:
            problems.append(f"</{name}> missing")
            continue
        bodies[name] = text[opening.end() : closing.start()]
        pos = closing.end()
    return bodies, problems


def _numbered_lines(body: str) -> list[tuple[int | None, str, str]]:
    """(step number or None, rest of the line, raw line) for each non-blank, non-fence line."""
    out: list[tuple[int | None, str, str]] = []
    for raw in body.splitlines():
        if not raw.strip() or _FENCE.match(raw):
            continue
        m = _STEP_LINE.match(raw)
        out.append((int(m.group(1)), m.group(2), raw) if m else (None, raw.strip(), raw))
    return out


def parse_answer(text: str) -> ParsedAnswer:
    """The format gate on a raw answer, and its key steps and orc lines (whatever parses)."""
    bodies, problems = _section_bodies(text)
    steps: list[Step] = []
    numbers: list[int] = []
    for k, (number, rest, raw) in enumerate(_numbered_lines(bodies.get("key", "")), start=1):
        if number is None:
            problems.append(f"key line {k} is not 'Step x: {{json}}': {raw.strip()[:60]}")
            continue
        try:
            data = json.loads(rest)
            if not isinstance(data, dict) or set(data) != {"action", "objects", "parameters"}:
                raise ValueError("keys must be exactly action, objects, parameters")
            steps.append(step_from_mapping(data, f"key step {number}"))
            numbers.append(number)
        except ValueError as exc:
            problems.append(f"key step {number}: {exc}")
    if "key" in bodies and not steps:
        problems.append("<key> has no steps")
    orc: list[str] = []
    orc_numbers: list[int] = []
    for number, rest, _raw in _numbered_lines(bodies.get("orc", "")):
        if number is None:  # a wrapped line continues the previous step
            if orc:
                orc[-1] = f"{orc[-1]} {rest}"
            continue
        orc.append(rest)
        orc_numbers.append(number)
    return ParsedAnswer(not problems, steps, numbers, orc, orc_numbers, problems)


def coverage(step: Step, orc_line: str, opts: ScoreOptions) -> float:
    """cov_i (eq. 11): the share of the step's tokens found in the normalised orc line."""
    items = [step.action, *step.objects, *step.parameters]
    if opts.coverage_tokens == "words":
        tokens = [w for i in items for w in normalize(i).split()]
    else:
        tokens = [normalize(i) for i in items]
    tokens = [t for t in tokens if t]
    if not tokens:
        return 0.0
    line = normalize(orc_line)
    return sum(1 for t in tokens if t in line) / len(tokens)


def consistency_gate(
    steps: Sequence[Step],
    step_numbers: Sequence[int],
    orc: Sequence[str],
    orc_numbers: Sequence[int],
    n_reference: int,
    opts: ScoreOptions,
) -> tuple[bool, list[float], list[str]]:
    """𝕀_cons (eq. 12): counts match, numbering is 1…N, and min cov_i ≥ τ."""
    problems: list[str] = []
    expected = list(range(1, len(steps) + 1))
    if list(step_numbers) != expected:
        problems.append("key steps are not numbered 1…N")
    if list(orc_numbers) != list(range(1, len(orc) + 1)):
        problems.append("orc steps are not numbered 1…N")
    if len(orc) != len(steps):
        problems.append(f"{len(steps)} key steps but {len(orc)} orc steps")
    if opts.count_check == "key_vs_reference" and len(steps) != n_reference:
        problems.append(f"{len(steps)} key steps but the reference has {n_reference}")
    covs = [coverage(s, o, opts) for s, o in zip(steps, orc, strict=False)]
    low = [i + 1 for i, c in enumerate(covs) if c < opts.tau]
    if low:
        problems.append(f"coverage below {opts.tau:g} at step(s) {', '.join(map(str, low))}")
    if not steps:
        problems.append("no key steps")
    return not problems, covs, problems
