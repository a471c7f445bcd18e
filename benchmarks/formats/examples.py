"""The example (procedure) format, ``how2bench.example.v1``, and the how2mine export kind.

::

    {schema_version?, source_example_id, topic, goal, resources: [str], steps: [str],
     url?, source_text?}

The how2mine export record kind is accepted on import too::

    {source_example: {id, topic, url, text}, final_procedure: {goal, steps, resources}}
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from benchmarks.formats.common import (
    DEFAULT_MAX_ERRORS,
    Checker,
    Limits,
    ParseResult,
    RecordError,
    read_file,
    topic_display,
    type_name,
)

SCHEMA_VERSION_EXAMPLE = "how2bench.example.v1"


@dataclass(frozen=True)
class ExampleRecord:
    line: int
    source_example_id: str
    topic_slug: str | None
    goal: str
    resources: list[str]
    steps: list[str]
    url: str = ""
    source_text: str = ""

    def content(self) -> tuple:
        """What decides whether a stored procedure already holds this record."""
        return (
            self.topic_slug,
            self.goal,
            list(self.resources),
            list(self.steps),
            self.url,
            self.source_text,
        )


def parse_example(
    value: Any, *, line: int, limits: Limits
) -> tuple[ExampleRecord | None, list[RecordError]]:
    """Validate one decoded JSON line as an example (bench or how2mine export kind)."""
    check = Checker(line, limits)
    if not isinstance(value, dict):
        check.error(None, f"expected a JSON object, got {type_name(value)}")
        return None, check.errors
    if "final_procedure" in value and "source_example" in value:
        fields = _how2mine_fields(check, value, limits)
    else:
        fields = _bench_fields(check, value, limits)
    if fields is None or check.errors:
        return None, check.errors
    return ExampleRecord(line=line, **fields), []


def _bench_fields(check: Checker, value: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The checked fields of a ``how2bench.example.v1`` record (a field in error is ``None``)."""
    check.schema_version(value, SCHEMA_VERSION_EXAMPLE)
    return {
        "source_example_id": check.ident(
            value.get("source_example_id", value.get("id")), "source_example_id"
        ),
        "topic_slug": check.topic(value.get("topic"), "topic"),
        "url": check.text(value.get("url"), "url", limit=limits.url),
        "source_text": check.text(
            value.get("source_text"), "source_text", limit=limits.source_text
        ),
        **_procedure_fields(check, value, "", limits),
    }


def _how2mine_fields(
    check: Checker, value: dict[str, Any], limits: Limits
) -> dict[str, Any] | None:
    """The checked fields of a how2mine export record, or ``None`` if its two parts are not
    objects. ``{source_example: {id, topic, url, text}, final_procedure: {goal, steps,
    resources}}``; ``id`` and ``topic`` may also sit at the top level."""
    src, proc = value["source_example"], value["final_procedure"]
    if not isinstance(src, dict):
        check.error("source_example", f"must be an object, got {type_name(src)}")
    if not isinstance(proc, dict):
        check.error("final_procedure", f"must be an object, got {type_name(proc)}")
    if check.errors:
        return None
    return {
        "source_example_id": check.ident(src.get("id", value.get("id")), "source_example.id"),
        "topic_slug": check.topic(src.get("topic") or value.get("topic"), "source_example.topic"),
        "url": check.text(src.get("url"), "source_example.url", limit=limits.url),
        "source_text": check.text(src.get("text"), "source_example.text", limit=limits.source_text),
        **_procedure_fields(check, proc, "final_procedure.", limits),
    }


def _procedure_fields(
    check: Checker, value: dict[str, Any], prefix: str, limits: Limits
) -> dict[str, Any]:
    """Goal, steps and resources, checked the same way in both record kinds; ``prefix`` names
    where they sit in the record (error messages say ``final_procedure.steps`` etc.)."""
    return {
        "goal": check.text(value.get("goal"), f"{prefix}goal", limit=limits.goal, required=True),
        "steps": check.string_list(
            value.get("steps"),
            f"{prefix}steps",
            item_limit=limits.step,
            count_limit=limits.steps,
            required=True,
        ),
        "resources": check.string_list(
            value.get("resources"),
            f"{prefix}resources",
            item_limit=limits.resource,
            count_limit=limits.resources,
            required=False,
        ),
    }


def read_examples(
    lines: Iterable[bytes | str],
    *,
    limits: Limits | None = None,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> ParseResult:
    """Parse and validate a whole example file; duplicates of ``source_example_id`` are errors."""
    return read_file(
        lines,
        parse=parse_example,
        duplicate="duplicate source_example_id",
        limits=limits,
        max_errors=max_errors,
    )


def example_record(
    *,
    source_example_id: str,
    topic_slug: str | None,
    goal: str,
    resources: list[str],
    steps: list[str],
    url: str,
    source_text: str,
) -> dict[str, Any]:
    """A ``how2bench.example.v1`` record (every field, as the reference writes them)."""
    return {
        "schema_version": SCHEMA_VERSION_EXAMPLE,
        "source_example_id": source_example_id,
        "url": url,
        "source_text": source_text,
        "topic": topic_display(topic_slug),
        "goal": goal,
        "resources": list(resources),
        "steps": list(steps),
    }
