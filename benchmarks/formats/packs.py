"""The scorer packs' own JSONL shapes, for import: one line is one item of a benchmark in the
record shape its pack scores (``manage.py score PACK FILE``), optionally with a model's output.
Pure: no Django imports.

A line splits into three parts:

- the item's **gold**: every field that is not an output or a meta field (ProcBench ``gold``
  states; SciRecipe ``gold`` steps ``{action, objects, parameters}`` and ``action_library``;
  CustomPlans ``steps`` (the original plan) and ``hint``; LongProc ``gold`` traces or the
  validator inputs ``numbers``/``target``, ``total_days``/``cities``/``flights``) → the
  procedure's ``payload``;
- the **output** (optional): ``prediction`` (raw text → the generation's ``model_completion``; a
  structured prediction → its ``payload``), and the pack's other output fields (SciRecipe
  ``prediction_orc``, CustomPlans ``edits`` and ``ratings``) → the generation's ``payload``;
- **meta**: ``id`` (→ ``source_example_id``), ``goal`` (optional; else "PACK item ID"),
  ``finish_reason``, ``prompt_tokens``, ``completion_tokens``.

Each line is checked by the pack itself (its ``score`` on the line, or on the gold with an empty
output when the line has none), so a line the importer takes is a line the pack can score; a
problem is a :class:`~benchmarks.formats.common.RecordError` naming the line and the field.
:func:`pack_record` rebuilds the pack's record from what was stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.formats.common import (
    DEFAULT_MAX_ERRORS,
    Checker,
    ErrorCollector,
    Limits,
    ParseResult,
    RecordError,
    iter_json_lines,
    type_name,
)
from benchmarks.packs.registry import PackScorer
from benchmarks.packs.registry import RecordError as PackRecordError

META_FIELDS = ("id", "goal", "finish_reason", "prompt_tokens", "completion_tokens")
# The output fields of each pack family (by name prefix); the rest of a line is the gold.
OUTPUT_FIELDS = {
    "procbench": ("prediction",),
    "longproc": ("prediction",),
    "scirecipe": ("prediction", "prediction_orc"),
    "customplans": ("edits", "ratings", "prediction"),
}
# What a line without an output is checked with (the pack's own "nothing predicted").
EMPTY_OUTPUT: dict[str, dict[str, Any]] = {
    "procbench": {"prediction": None},
    "longproc": {"prediction": ""},
    "scirecipe": {"prediction": ""},
    "customplans": {"edits": []},
}


def family(pack: str) -> str:
    """The pack family of a pack name (``longproc-countdown`` → ``longproc``)."""
    head = pack.split("-", 1)[0]
    if head not in OUTPUT_FIELDS:
        raise ValueError(f"no import shape for pack {pack!r}; known: {', '.join(OUTPUT_FIELDS)}")
    return head


@dataclass(frozen=True)
class PackLine:
    """One imported line: the procedure's part and, when the line has an output, the
    generation's part."""

    line: int
    source_example_id: str
    goal: str
    steps: list[str]
    gold: dict[str, Any]
    has_output: bool = False
    model_completion: str = ""
    output: dict[str, Any] = field(default_factory=dict)
    finish_reason: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    predicted_steps: list[str] = field(default_factory=list)


MAX_PREDICTED_STEPS = 200


def predicted_display(output: Mapping[str, Any], raw: str, breakdown: Mapping[str, Any]) -> list:
    """The output's steps as text, for the pages that list a generation's steps: the
    customized plan (CustomPlans edits applied), a structured prediction's steps or states, or
    the raw text's non-empty lines (at most 200)."""
    customized = breakdown.get("customized_steps")
    value = output.get("prediction")
    if isinstance(customized, list):
        steps = [str(s) for s in customized]
    elif isinstance(value, list):
        steps = [_step_text(v) for v in value]
    else:
        steps = [line for line in raw.splitlines() if line.strip()]
    return steps[:MAX_PREDICTED_STEPS]


def _step_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and "action" in value:  # a SciRecipe step
        parts = [str(value.get("action", ""))]
        for key in ("objects", "parameters"):
            items = value.get(key) or []
            if isinstance(items, list) and items:
                parts.append(", ".join(str(i) for i in items))
        return " | ".join(p for p in parts if p)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def display_steps(fam: str, gold: Mapping[str, Any]) -> list[str]:
    """The reference steps shown for an item: the original plan (CustomPlans), the gold steps
    or states as text (SciRecipe, ProcBench, LongProc traces given as lists); else none."""
    value = gold.get("steps") if fam == "customplans" else gold.get("gold")
    if isinstance(value, list):
        return [_step_text(v) for v in value]
    if isinstance(value, str):
        return [line for line in value.splitlines() if line.strip()]
    return []


def pack_record(
    *,
    item_id: str,
    gold: Mapping[str, Any],
    output: Mapping[str, Any],
    model_completion: str = "",
    finish_reason: str = "",
    pack: str | None = None,
) -> dict[str, Any]:
    """The pack's record for one stored generation: the item's gold, the structured output,
    the raw text where no structured output is stored (as ``prediction``; for CustomPlans as
    ``edits``, which the pack parses from ``replace(2, …)`` calls), and ``finish_reason`` when
    known."""
    record: dict[str, Any] = {"id": item_id, **gold, **output}
    if pack is not None and family(pack) == "customplans":
        if "edits" not in output and model_completion.strip():
            record["edits"] = model_completion
    elif "prediction" not in output:
        record["prediction"] = model_completion
    if finish_reason:
        record["finish_reason"] = finish_reason
    return record


def _tokens(check: Checker, value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        got = value if isinstance(value, int) and not isinstance(value, bool) else type_name(value)
        check.error(name, f"must be a non-negative integer, got {got}")
        return None
    return value


def parse_pack_line(
    value: Any, *, line: int, pack: PackScorer, limits: Limits
) -> tuple[PackLine | None, list[RecordError]]:
    """Validate one decoded line of ``pack``'s shape (module docstring)."""
    fam = family(pack.name)
    check = Checker(line, limits)
    if not isinstance(value, dict):
        check.error(None, f"expected a JSON object, got {type_name(value)}")
        return None, check.errors
    ident = check.ident(value.get("id"), "id")
    goal = check.text(value.get("goal"), "goal", limit=limits.goal)
    reason = check.text(value.get("finish_reason"), "finish_reason", limit=32)
    prompt_tokens = _tokens(check, value.get("prompt_tokens"), "prompt_tokens")
    completion_tokens = _tokens(check, value.get("completion_tokens"), "completion_tokens")
    outputs = OUTPUT_FIELDS[fam]
    output = {k: value[k] for k in outputs if value.get(k) is not None}
    gold = {k: v for k, v in value.items() if k not in META_FIELDS and k not in outputs}
    raw = output.get("prediction") if isinstance(output.get("prediction"), str) else None
    if raw is not None and len(raw) > limits.completion:
        check.error("prediction", f"is too long: {len(raw)} characters (limit {limits.completion})")
    if check.errors:
        return None, check.errors
    record = {"id": ident, **gold, **(output or EMPTY_OUTPUT[fam])}
    if reason:
        record["finish_reason"] = reason
    try:
        scored = pack.score(record)
    except PackRecordError as exc:
        return None, [RecordError(line, exc.field, exc.message)]
    except (ValueError, TypeError, KeyError) as exc:
        return None, [RecordError(line, None, f"not scorable by {pack.name}: {exc}")]
    stored_output = {k: v for k, v in output.items() if not (k == "prediction" and raw is not None)}
    return (
        PackLine(
            line=line,
            source_example_id=ident,
            goal=goal or f"{pack.name} item {ident}",
            steps=display_steps(fam, gold),
            gold=gold,
            has_output=bool(output),
            model_completion=raw or "",
            output=stored_output,
            finish_reason=reason or "",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            predicted_steps=predicted_display(output, raw or "", scored.breakdown or {})
            if output
            else [],
        ),
        [],
    )


def read_pack_lines(
    lines: Iterable[bytes | str],
    *,
    pack: PackScorer,
    limits: Limits | None = None,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> ParseResult:
    """Parse a whole file of ``pack``'s shape; a repeated ``id`` is an error. Once the file is
    refused no records are kept."""
    limits = limits or Limits()
    errors = ErrorCollector(cap=max_errors)
    records: list[PackLine] = []
    notes: list[str] = []
    first: dict[str, int] = {}
    for number, value in iter_json_lines(lines, notes):
        if isinstance(value, RecordError):
            errors.add(value)
            continue
        record, problems = parse_pack_line(value, line=number, pack=pack, limits=limits)
        if problems:
            errors.extend(problems)
            continue
        previous = first.setdefault(record.source_example_id, number)
        if previous != number:
            errors.add(
                RecordError(
                    number,
                    "id",
                    f"duplicate id {record.source_example_id!r} (first on line {previous})",
                )
            )
            continue
        if not errors:
            records.append(record)
    return ParseResult(records=records if not errors else [], errors=errors, notes=notes)
