"""The reference implementation's judgment JSONL (``how2bench.judgment.v1``). Pure Python.

One record::

    {source_example_id, judge_id?, judge?: {backend, provider, model}, topic?, goal?, steps?,
     predicted_steps?, reasoning, critical_failures: [{failure, L1_steps: [int], L2_steps: [int]}],
     has_failure, n_failures, parse_failed}

Every record the reference writes is accepted: ``failure`` may be empty, step numbers are any
integers (its parser does no range check, so 0 occurs), a parse failure has no failures.

Every problem is a :class:`benchmarks.formats.RecordError` naming the line and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmarks.formats import RecordError

SCHEMA_VERSION_JUDGMENT = "how2bench.judgment.v1"


@dataclass(frozen=True)
class JudgmentRecord:
    line: int
    source_example_id: str
    reasoning: str
    critical_failures: list[dict[str, Any]]
    has_failure: bool
    n_failures: int
    parse_failed: bool
    judge_model: str = ""
    raw_output: str = ""
    warnings: list[str] = field(default_factory=list)
    predicted_steps: list[str] | None = None  # as judged; checked against the generation


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_judgment(value: Any, *, line: int) -> tuple[JudgmentRecord | None, list[RecordError]]:
    errors: list[RecordError] = []

    def err(fieldname: str | None, message: str) -> None:
        errors.append(RecordError(line, fieldname, message))

    if not isinstance(value, dict):
        err(None, "a judgment record must be a JSON object")
        return None, errors
    sid = value.get("source_example_id")
    if not isinstance(sid, str) or not sid.strip():
        err("source_example_id", "required, a non-empty string")
    reasoning = value.get("reasoning", "")
    if reasoning is None:
        reasoning = ""
    if not isinstance(reasoning, str):
        err("reasoning", "must be a string")
    parse_failed = value.get("parse_failed", False)
    if not isinstance(parse_failed, bool):
        err("parse_failed", "must be true or false")
    failures = value.get("critical_failures")
    cleaned: list[dict[str, Any]] = []
    if not isinstance(failures, list):
        err("critical_failures", "required, a list of {failure, L1_steps, L2_steps}")
    else:
        for i, item in enumerate(failures):
            where = f"critical_failures[{i}]"
            if not isinstance(item, dict):
                err(where, "must be an object")
                continue
            # as the reference writes it: any text (empty too), any integer step number
            # (its parser does no range check: 0 and numbers past the list occur)
            failure = item.get("failure", "")
            if not isinstance(failure, str):
                err(f"{where}.failure", "must be a string")
            steps = {}
            for key in ("L1_steps", "L2_steps"):
                v = item.get(key, [])
                if not isinstance(v, list) or not all(_is_int(x) for x in v):
                    err(f"{where}.{key}", "must be a list of step numbers (integers)")
                steps[key] = v if isinstance(v, list) else []
            cleaned.append({"failure": failure if isinstance(failure, str) else "", **steps})
    n_failures = value.get("n_failures", len(cleaned))
    if not _is_int(n_failures) or n_failures < 0:
        err("n_failures", "must be a non-negative integer")
    elif isinstance(failures, list) and n_failures != len(failures):
        err("n_failures", f"is {n_failures} but critical_failures holds {len(failures)}")
    expected_has = bool(cleaned) or parse_failed is True
    has_failure = value.get("has_failure", expected_has)
    if not isinstance(has_failure, bool):
        err("has_failure", "must be true or false")
    elif (
        isinstance(failures, list)
        and isinstance(parse_failed, bool)
        and not parse_failed
        and has_failure != bool(failures)
    ):
        err(
            "has_failure",
            f"is {str(has_failure).lower()} but critical_failures holds {len(failures)}",
        )
    predicted = value.get("predicted_steps")
    if predicted is not None and (
        not isinstance(predicted, list) or not all(isinstance(x, str) for x in predicted)
    ):
        err("predicted_steps", "must be a list of strings")
    if errors:
        return None, errors
    judge = value.get("judge") if isinstance(value.get("judge"), dict) else {}
    return JudgmentRecord(
        line=line,
        source_example_id=sid.strip(),
        reasoning=reasoning,
        critical_failures=cleaned,
        has_failure=has_failure,
        n_failures=n_failures,
        parse_failed=parse_failed,
        judge_model=str(judge.get("model", "")),
        raw_output=str(value.get("raw_output", "") or ""),
        predicted_steps=predicted,
    ), []
