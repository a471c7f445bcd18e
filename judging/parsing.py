"""Parsing of H.3 judge output, in two profiles. Pure Python (no Django).

``reference`` (the default): the reference implementation's rules, exactly. The whole reply
goes to ``json.loads`` (JSON whitespace around it is the only tolerance); anything it refuses,
or a top-level value that is not an object, is a *retryable* parse failure; ``{}`` is a parse
failure that is not retried. A parsed object is then normalised leniently: a missing, null or
non-list ``critical_failures`` means no failures, non-object entries are dropped, ``failure``
defaults to ``""`` (non-strings become their ``str()``), ``reasoning`` likewise, and every
step number goes through Python's ``int()`` (``"3"`` → 3, ``3.7`` → 3, ``true`` → 1; no range
check; a non-list becomes ``[]``). A step number ``int()`` refuses makes the item a parse
failure that is not retried (the reference's run would stop there).

``lenient``: the recovering parser below. It accepts the JSON object alone or wrapped: ``<think>…</think>`` blocks (closed or with only
the closing tag), Markdown code fences, prose before and after. Validates the shape:
``critical_failures`` must be a list of objects with a string ``failure`` and lists of
integer step numbers (digit strings and a bare integer are accepted). Step numbers outside
1..n (n = number of steps in L1 / L2) are dropped and reported in ``warnings``.

Anything else (no JSON object, wrong types, missing ``critical_failures``) is a parse
failure: ``ParseResult.parse_failed`` with ``error`` saying what was wrong.

Both never raise. ``ParseResult.retryable`` says whether a parse failure may be asked again
(:data:`PARSE_RETRIES` more calls, with :data:`RETRY_SUFFIX` appended for API judges).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"^.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder()

PROFILES = PARSE_PROFILES = ("reference", "lenient")
DEFAULT_PROFILE = "reference"
# further calls after a retryable parse failure (the reference: 2, so 3 calls in all)
PARSE_RETRIES = {"reference": 2, "lenient": 2}
# appended to the prompt of a retry by an API judge (the reference's JSON-mode client)
RETRY_SUFFIX = "\n\nReturn ONLY valid json. Do not include any other text."


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"unknown parse profile {profile!r}; use one of: {', '.join(PROFILES)}")
    return profile


@dataclass
class ParseResult:
    reasoning: str = ""
    critical_failures: list[dict[str, Any]] = field(default_factory=list)
    parse_failed: bool = False
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    retryable: bool = False  # a parse failure that another call may fix

    @property
    def n_failures(self) -> int:
        return len(self.critical_failures)

    @property
    def has_failure(self) -> bool:
        # as the reference implementation: a parse failure counts as has_failure (and is
        # excluded from How2Score by the aggregate)
        return self.parse_failed or bool(self.critical_failures)


class _Invalid(ValueError):
    pass


def _strip_think(text: str) -> str:
    text = _THINK_BLOCK.sub("", text)
    if "</think>" in text.lower():
        text = _THINK_CLOSE.sub("", text, count=1)
    return text


def _candidates(text: str):
    """Decoded JSON objects found in ``text``, best candidates first."""
    stripped = text.strip()
    with contextlib.suppress(ValueError):
        yield json.loads(stripped)
    for fenced in _FENCE.findall(text):
        with contextlib.suppress(ValueError):
            yield json.loads(fenced.strip())
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = _decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        yield obj


def _steps(value: Any, *, where: str, n: int | None, warnings: list[str]) -> list[int]:
    if value is None:
        return []
    if isinstance(value, bool):
        raise _Invalid(f"{where} must be a list of step numbers, not a boolean")
    if isinstance(value, (int, str)):
        value = [value]
    if not isinstance(value, list):
        raise _Invalid(f"{where} must be a list of step numbers, not {type(value).__name__}")
    out: list[int] = []
    for item in value:
        if isinstance(item, bool):
            raise _Invalid(f"{where} holds a boolean, not a step number")
        if isinstance(item, float) and item.is_integer():
            item = int(item)
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item.strip())
        if not isinstance(item, int):
            raise _Invalid(f"{where} holds {item!r}, not a step number")
        if n is not None and not 1 <= item <= n:
            warnings.append(f"{where}: step {item} out of range 1..{n}, dropped")
            continue
        if item not in out:
            out.append(item)
    return out


def _validate(obj: Any, *, n_l1: int | None, n_l2: int | None) -> ParseResult:
    if not isinstance(obj, dict):
        raise _Invalid(f"expected a JSON object, got {type(obj).__name__}")
    if "critical_failures" not in obj:
        raise _Invalid("missing field 'critical_failures'")
    reasoning = obj.get("reasoning", "")
    if reasoning is None:
        reasoning = ""
    if not isinstance(reasoning, str):
        raise _Invalid(f"'reasoning' must be a string, not {type(reasoning).__name__}")
    failures = obj["critical_failures"]
    if failures is None:
        failures = []
    if not isinstance(failures, list):
        raise _Invalid(f"'critical_failures' must be a list, not {type(failures).__name__}")
    warnings: list[str] = []
    out: list[dict[str, Any]] = []
    for i, item in enumerate(failures):
        where = f"critical_failures[{i}]"
        if not isinstance(item, dict):
            raise _Invalid(f"{where} must be an object, not {type(item).__name__}")
        failure = item.get("failure")
        if not isinstance(failure, str) or not failure.strip():
            raise _Invalid(f"{where}.failure must be a non-empty string")
        out.append(
            {
                "failure": failure.strip(),
                "L1_steps": _steps(
                    item.get("L1_steps"), where=f"{where}.L1_steps", n=n_l1, warnings=warnings
                ),
                "L2_steps": _steps(
                    item.get("L2_steps"), where=f"{where}.L2_steps", n=n_l2, warnings=warnings
                ),
            }
        )
    return ParseResult(reasoning=reasoning, critical_failures=out, warnings=warnings)


def _failed(error: str, *, retryable: bool) -> ParseResult:
    return ParseResult(parse_failed=True, error=error, retryable=retryable)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _int_steps(value: Any, *, where: str) -> list[int]:
    if not isinstance(value, list):
        return []
    out = []
    for x in value:
        try:
            out.append(int(x))
        except (TypeError, ValueError, OverflowError):
            raise _Invalid(f"{where}: int() refuses {x!r}") from None
    return out


def _parse_reference(text: str | None) -> ParseResult:
    try:
        obj = json.loads(text if isinstance(text, str) else "")
    except Exception as exc:  # noqa: BLE001 - whatever json.loads refuses is a parse failure
        return _failed(f"not a JSON value as a whole: {exc}"[:300], retryable=True)
    if not isinstance(obj, dict):
        return _failed(f"expected a JSON object, got {type(obj).__name__}", retryable=True)
    if not obj:
        return _failed("empty JSON object {}", retryable=False)
    failures = obj.get("critical_failures", [])
    out: list[dict[str, Any]] = []
    try:
        for i, item in enumerate(failures if isinstance(failures, list) else []):
            if not isinstance(item, dict):
                continue
            where = f"critical_failures[{i}]"
            out.append(
                {
                    "failure": _as_text(item.get("failure", "")),
                    "L1_steps": _int_steps(item.get("L1_steps", []), where=f"{where}.L1_steps"),
                    "L2_steps": _int_steps(item.get("L2_steps", []), where=f"{where}.L2_steps"),
                }
            )
    except _Invalid as exc:
        return _failed(str(exc)[:300], retryable=False)
    return ParseResult(reasoning=_as_text(obj.get("reasoning", "")), critical_failures=out)


def parse_judge_output(
    text: str | None,
    *,
    profile: str = DEFAULT_PROFILE,
    n_l1: int | None = None,
    n_l2: int | None = None,
) -> ParseResult:
    """Parse one judge reply under ``profile`` (``reference`` or ``lenient``).
    ``n_l1``/``n_l2``: step counts for the lenient profile's range checks (None: no check);
    the reference profile does no range check."""
    if check_profile(profile) == "reference":
        return _parse_reference(text)
    return _parse_lenient(text, n_l1=n_l1, n_l2=n_l2)


def _parse_lenient(text: str | None, *, n_l1: int | None, n_l2: int | None) -> ParseResult:
    if not text or not text.strip():
        return _failed("empty output", retryable=True)
    body = _strip_think(text)
    first_error = "no JSON object found"
    seen_object = False
    for candidate in _candidates(body):
        if isinstance(candidate, dict) and "critical_failures" not in candidate and not seen_object:
            first_error = "missing field 'critical_failures'"
            continue
        seen_object = True
        try:
            return _validate(candidate, n_l1=n_l1, n_l2=n_l2)
        except _Invalid as exc:
            first_error = str(exc)
            break
    return _failed(first_error, retryable=True)
