"""Read known-answer items (attention, training, qualification) from JSONL (pure Python).

One object per line: ``{"source_example_id" or "generation_id", "kind":
"attention|training|qualification|gold", "expected_has_failure": true|false, "explanation"?,
"attempt"?: 1|2}`` (``attempt`` 2: a qualification item of the second try; ``gold``: a silent
gold item, shown like any other). A study of another form type gives the answer as
``"expected_label": {...}`` instead (checked by the form type), with ``"generation_b_id"`` for
a pairwise pair and ``"context"`` where the form shows one.
Errors name the file line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from core.text import first_bad_text

KINDS = ("attention", "training", "qualification", "gold")
# what a line may give as its answer (the first for critical-failure studies)
ANSWER_KEYS = ("expected_has_failure", "expected_label", "generation_b_id", "context")


class KnownItemsError(ValueError):
    pass


def parse_known_items(lines: Iterable[str], *, source: str = "<input>") -> list[dict]:
    items: list[dict] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{source} line {number}"
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise KnownItemsError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise KnownItemsError(f"{where}: expected a JSON object")
        bad = first_bad_text(obj)  # the one text gate (core.text)
        if bad is not None:
            raise KnownItemsError(f"{where}: {bad[1]}")
        has_gid, has_sid = "generation_id" in obj, "source_example_id" in obj
        if has_gid == has_sid:
            raise KnownItemsError(
                f"{where}: give exactly one of generation_id or source_example_id"
            )
        if has_gid and (
            not isinstance(obj["generation_id"], int) or isinstance(obj["generation_id"], bool)
        ):
            raise KnownItemsError(f"{where}: field generation_id must be an integer")
        if has_sid and (
            not isinstance(obj["source_example_id"], str) or not obj["source_example_id"]
        ):
            raise KnownItemsError(f"{where}: field source_example_id must be a non-empty string")
        if obj.get("kind") not in KINDS:
            raise KnownItemsError(f"{where}: field kind must be one of {', '.join(KINDS)}")
        answer = _answer(obj, where)
        explanation = obj.get("explanation", "")
        if not isinstance(explanation, str):
            raise KnownItemsError(f"{where}: field explanation must be a string")
        attempt = obj.get("attempt", 1)
        if attempt not in (1, 2) or isinstance(attempt, bool):
            raise KnownItemsError(f"{where}: field attempt must be 1 or 2")
        if attempt == 2 and obj["kind"] != "qualification":
            raise KnownItemsError(f"{where}: field attempt 2 is for qualification items only")
        item = {
            "attempt": attempt,
            "kind": obj["kind"],
            **answer,
            "explanation": explanation,
            "line": number,
        }
        item["generation_id" if has_gid else "source_example_id"] = obj[
            "generation_id" if has_gid else "source_example_id"
        ]
        items.append(item)
    return items


def _answer(obj: dict, where: str) -> dict:
    """The known answer: ``expected_has_failure`` (critical-failure studies) or
    ``expected_label`` (the other form types, checked by the form type when the study is
    made), with a pairwise pair's ``generation_b_id`` and a ``context`` where the form shows one."""
    if "expected_label" not in obj:
        if not isinstance(obj.get("expected_has_failure"), bool):
            raise KnownItemsError(f"{where}: field expected_has_failure must be true or false")
        return {"expected_has_failure": obj["expected_has_failure"]}
    if "expected_has_failure" in obj:
        raise KnownItemsError(
            f"{where}: give expected_has_failure (critical-failure studies) or expected_label "
            "(other form types), not both"
        )
    answer = {"expected_label": obj["expected_label"]}
    for key, kind, what in (
        ("expected_label", dict, "an object"),
        ("context", dict, "an object"),
        ("generation_b_id", int, "an integer"),
    ):
        if key in obj:
            if not isinstance(obj[key], kind) or isinstance(obj[key], bool):
                raise KnownItemsError(f"{where}: field {key} must be {what}")
            answer[key] = obj[key]
    return answer
