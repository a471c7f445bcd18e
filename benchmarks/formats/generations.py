"""The generation format, ``how2bench.generation.v1``: parsing, matching to procedures, records.

::

    {schema_version?, generator_id?, source_example_id, predicted_steps: [str],
     model_completion?, token_count?, finish_reason?, prompt_tokens?, completion_tokens?,
     goal?, steps?, resources?, topic?,
     generator?: {backend, provider, model}, prompt?, ...}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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

SCHEMA_VERSION_GENERATION = "how2bench.generation.v1"


@dataclass(frozen=True)
class GenerationRecord:
    line: int
    source_example_id: str
    predicted_steps: list[str]
    model_completion: str = ""
    token_count: int | None = None
    generator_id: str = ""
    generator_model: str = ""
    # how the model stopped and its token counts, when the file says (None / "": not given)
    finish_reason: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def parse_generation(
    value: Any, *, line: int, limits: Limits
) -> tuple[GenerationRecord | None, list[RecordError]]:
    """Validate one decoded JSON line as a generation; the carried procedure fields are only
    type-checked (the stored procedure is what counts)."""
    check = Checker(line, limits)
    if not isinstance(value, dict):
        check.error(None, f"expected a JSON object, got {type_name(value)}")
        return None, check.errors
    check.schema_version(value, SCHEMA_VERSION_GENERATION)
    ident = check.ident(value.get("source_example_id"), "source_example_id")
    predicted = check.string_list(
        value.get("predicted_steps"),
        "predicted_steps",
        item_limit=limits.step,
        count_limit=limits.steps,
        required=True,
    )
    completion = check.text(
        value.get("model_completion"), "model_completion", limit=limits.completion, strip=False
    )
    token_count = value.get("token_count")
    if token_count is not None and (
        not isinstance(token_count, int) or isinstance(token_count, bool) or token_count < 0
    ):
        check.error("token_count", f"must be a non-negative integer, got {token_count!r}")
    finish_reason = check.text(value.get("finish_reason"), "finish_reason", limit=32)
    usage = {}
    for name in ("prompt_tokens", "completion_tokens"):
        count = value.get(name)
        if count is not None and (
            not isinstance(count, int) or isinstance(count, bool) or count < 0
        ):
            check.error(name, f"must be a non-negative integer, got {count!r}")
        usage[name] = count
    generator_id = check.text(value.get("generator_id"), "generator_id", limit=limits.id)
    generator_model = ""
    info = value.get("generator")
    if info is not None and not isinstance(info, dict):
        check.error("generator", f"must be an object, got {type_name(info)}")
    elif isinstance(info, dict):
        generator_model = check.text(info.get("model"), "generator.model", limit=limits.id)
    if not generator_model and "model" in value:
        generator_model = check.text(value.get("model"), "model", limit=limits.id)
    # Carried procedure fields (goal, steps, resources, topic) come from the stored procedure;
    # only their types are checked so that a malformed file is not half-understood.
    for name in ("goal", "topic"):
        if value.get(name) is not None and not isinstance(value[name], str):
            check.error(name, f"must be a string, got {type_name(value[name])}")
    for name in ("steps", "resources"):
        if value.get(name) is not None and not isinstance(value[name], list):
            check.error(name, f"must be a list of strings, got {type_name(value[name])}")
    if check.errors:
        return None, check.errors
    return (
        GenerationRecord(
            line=line,
            source_example_id=ident,
            predicted_steps=predicted,
            model_completion=completion,
            token_count=token_count,
            generator_id=generator_id or "",
            generator_model=generator_model or "",
            finish_reason=finish_reason or "",
            **usage,
        ),
        [],
    )


def read_generations(
    lines: Iterable[bytes | str],
    *,
    limits: Limits | None = None,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> ParseResult:
    """Parse and validate a whole generation file; two generations for one example are an error."""
    return read_file(
        lines,
        parse=parse_generation,
        duplicate="duplicate generation for source_example_id",
        limits=limits,
        max_errors=max_errors,
    )


def match_generations(
    records: Iterable[GenerationRecord], index: Mapping[str, list[Any]], *, where: str
) -> tuple[dict[int, Any], list[RecordError]]:
    """Resolve each record's ``source_example_id`` against ``index`` (id → candidate procedures).

    Returns ``{line: procedure}`` and errors for ids that are unknown or ambiguous; ``where``
    describes the searched datasets for the messages.
    """
    matched: dict[int, Any] = {}
    errors: list[RecordError] = []
    for record in records:
        candidates = index.get(record.source_example_id, [])
        if not candidates:
            errors.append(
                RecordError(
                    record.line,
                    "source_example_id",
                    f"unknown example {record.source_example_id!r} in {where}",
                )
            )
        elif len(candidates) > 1:
            errors.append(
                RecordError(
                    record.line,
                    "source_example_id",
                    f"ambiguous example {record.source_example_id!r}: it is in {len(candidates)} datasets "
                    "(choose one with --dataset NAME[@VERSION])",
                )
            )
        else:
            matched[record.line] = candidates[0]
    return matched, errors


def fill_token_counts(
    records: list[GenerationRecord], count_steps_tokens: Callable[[list[str]], int]
) -> list[GenerationRecord]:
    """Records with a token count (given, or counted over the predicted steps)."""
    out = []
    for r in records:
        if r.token_count is None:
            r = GenerationRecord(
                line=r.line,
                source_example_id=r.source_example_id,
                predicted_steps=r.predicted_steps,
                model_completion=r.model_completion,
                token_count=count_steps_tokens(r.predicted_steps),
                generator_id=r.generator_id,
                generator_model=r.generator_model,
                finish_reason=r.finish_reason,
                prompt_tokens=r.prompt_tokens,
                completion_tokens=r.completion_tokens,
            )
        out.append(r)
    return out


def generation_record(
    *,
    generator_name: str,
    generator_backend: str,
    generator_model: str,
    source_example_id: str,
    topic_slug: str | None,
    goal: str,
    steps: list[str],
    resources: list[str],
    model_completion: str,
    predicted_steps: list[str],
    token_count: int | None,
    finish_reason: str = "",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
) -> dict[str, Any]:
    """A ``how2bench.generation.v1`` record carrying its procedure, like the reference writes."""
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION_GENERATION,
        "generator_id": generator_name,
        "source_example_id": source_example_id,
        "topic": topic_display(topic_slug),
        "goal": goal,
        "steps": list(steps),
        "resources": list(resources),
        "model_completion": model_completion,
        "predicted_steps": list(predicted_steps),
        "generator": {"backend": generator_backend, "provider": "", "model": generator_model},
    }
    if token_count is not None:
        record["token_count"] = token_count
    if finish_reason:
        record["finish_reason"] = finish_reason
    for name, count in (("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens)):
        if count is not None:
            record[name] = count
    return record
