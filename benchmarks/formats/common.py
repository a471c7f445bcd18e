"""JSONL formats shared with the reference implementation (lilakk/how2everything ``how2bench``).

Pure Python, no Django: parsing and validation of example (procedure) and generation records,
and the builders of the records we export.

- example, ``how2bench.example.v1``::

    {schema_version?, source_example_id, topic, goal, resources: [str], steps: [str],
     url?, source_text?}

  The how2mine export record kind is accepted on import too::

    {source_example: {id, topic, url, text}, final_procedure: {goal, steps, resources}}

- generation, ``how2bench.generation.v1``::

    {schema_version?, generator_id?, source_example_id, predicted_steps: [str],
     model_completion?, token_count?, goal?, steps?, resources?, topic?,
     generator?: {backend, provider, model}, prompt?, ...}

Input is read line by line (bytes or str). Every problem becomes a :class:`RecordError` naming
the line number and the field; callers collect them (capped) and refuse the whole file.
Text fields are stripped of surrounding whitespace (as the reference does); topics are
canonicalised to the slugs of :mod:`benchmarks.topics`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.topics import topic_name, topic_slug

SCHEMA_VERSION_EXAMPLE = "how2bench.example.v1"
SCHEMA_VERSION_GENERATION = "how2bench.generation.v1"

DEFAULT_MAX_ERRORS = 20


# --- limits and errors ----------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """Largest accepted sizes (characters, or items for ``steps``/``resources``)."""

    goal: int = 2_000
    step: int = 5_000
    steps: int = 200
    resource: int = 1_000
    resources: int = 200
    source_text: int = 2_000_000
    completion: int = 200_000
    id: int = 255
    url: int = 2_000

    @classmethod
    def from_mapping(cls, values: Mapping[str, int] | None) -> Limits:
        if not values:
            return cls()
        known = cls.__dataclass_fields__.keys()
        return cls(**{k: int(v) for k, v in values.items() if k in known})


@dataclass(frozen=True)
class RecordError:
    """One problem in an input file: its 1-based line number, the field (if any) and what is wrong."""

    line: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


@dataclass
class ErrorCollector:
    """Keeps the first ``cap`` errors and counts all of them."""

    cap: int = DEFAULT_MAX_ERRORS
    errors: list[RecordError] = field(default_factory=list)
    total: int = 0

    def add(self, error: RecordError) -> None:
        self.total += 1
        if len(self.errors) < self.cap:
            self.errors.append(error)

    def extend(self, errors: Iterable[RecordError]) -> None:
        for error in errors:
            self.add(error)

    def __bool__(self) -> bool:
        return self.total > 0

    def lines(self) -> list[str]:
        out = [str(e) for e in self.errors]
        if self.total > len(self.errors):
            out.append(f"... and {self.total - len(self.errors)} more error(s)")
        return out


# --- parsed records ----------------------------------------------------------------------------


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


@dataclass(frozen=True)
class GenerationRecord:
    line: int
    source_example_id: str
    predicted_steps: list[str]
    model_completion: str = ""
    token_count: int | None = None
    generator_id: str = ""
    generator_model: str = ""


@dataclass
class ParseResult:
    records: list
    errors: ErrorCollector


# --- reading lines -------------------------------------------------------------------------------


def iter_json_lines(lines: Iterable[bytes | str]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every non-blank line; ``value`` is the decoded JSON,
    or a :class:`RecordError` for invalid UTF-8 or malformed JSON."""
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    number,
                    RecordError(number, None, f"invalid UTF-8 at byte {exc.start} of the line"),
                )
                continue
        else:
            text = raw.lstrip("\ufeff") if number == 1 else raw
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            yield (
                number,
                RecordError(number, None, f"malformed JSON: {exc.msg} (column {exc.colno})"),
            )
            continue
        yield number, value


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }.get(type(value), type(value).__name__)


class _Checker:
    """Field checks for one record; appends errors and returns cleaned values (or None)."""

    def __init__(self, line: int, limits: Limits) -> None:
        self.line = line
        self.limits = limits
        self.errors: list[RecordError] = []

    def error(self, field_name: str | None, message: str) -> None:
        self.errors.append(RecordError(self.line, field_name, message))

    def text(
        self, value: Any, name: str, *, limit: int, required: bool = False, strip: bool = True
    ) -> str | None:
        if value is None:
            if required:
                self.error(name, "is missing")
                return None
            return ""
        if not isinstance(value, str):
            self.error(name, f"must be a string, got {_type_name(value)}")
            return None
        if strip:
            value = value.strip()
        if required and not value:
            self.error(name, "must not be empty")
            return None
        if len(value) > limit:
            self.error(name, f"is too long: {len(value)} characters (limit {limit})")
            return None
        return value

    def ident(self, value: Any, name: str) -> str | None:
        # Ids may be numbers in some exports; accept integers, never floats or booleans.
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return self.text(value, name, limit=self.limits.id, required=True)

    def string_list(
        self, value: Any, name: str, *, item_limit: int, count_limit: int, required: bool
    ) -> list[str] | None:
        if value is None:
            if required:
                self.error(name, "is missing")
                return None
            return []
        if not isinstance(value, list):
            self.error(name, f"must be a list of strings, got {_type_name(value)}")
            return None
        if required and not value:
            self.error(name, "must not be empty")
            return None
        if len(value) > count_limit:
            self.error(name, f"has too many items: {len(value)} (limit {count_limit})")
            return None
        out: list[str] = []
        ok = True
        for i, item in enumerate(value):
            item_name = f"{name}[{i}]"
            if not isinstance(item, str):
                self.error(item_name, f"must be a string, got {_type_name(item)}")
                ok = False
                continue
            item = item.strip()
            if not item:
                self.error(item_name, "must not be empty")
                ok = False
            elif len(item) > item_limit:
                self.error(item_name, f"is too long: {len(item)} characters (limit {item_limit})")
                ok = False
            out.append(item)
        return out if ok else None

    def topic(self, value: Any, name: str) -> str | bool | None:
        """Return the topic slug, None for no topic, or False when invalid."""
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            self.error(name, f"must be a string, got {_type_name(value)}")
            return False
        if not value.strip():
            return None
        slug = topic_slug(value)
        if slug is None:
            self.error(
                name,
                f"unknown topic {value!r} (expected one of the 14 WebOrganizer topics, e.g. 'Food & Dining')",
            )
            return False
        return slug

    def schema_version(self, record: Mapping[str, Any], expected: str) -> None:
        if "schema_version" not in record:
            return
        value = record["schema_version"]
        if value != expected:
            self.error("schema_version", f"expected {expected!r}, got {value!r}")


# --- examples (procedures) ------------------------------------------------------------------------


def parse_example(
    value: Any, *, line: int, limits: Limits
) -> tuple[ExampleRecord | None, list[RecordError]]:
    """Validate one decoded JSON line as an example (bench or how2mine export kind)."""
    check = _Checker(line, limits)
    if not isinstance(value, dict):
        check.error(None, f"expected a JSON object, got {_type_name(value)}")
        return None, check.errors

    if "final_procedure" in value and "source_example" in value:
        src, proc = value["source_example"], value["final_procedure"]
        if not isinstance(src, dict):
            check.error("source_example", f"must be an object, got {_type_name(src)}")
        if not isinstance(proc, dict):
            check.error("final_procedure", f"must be an object, got {_type_name(proc)}")
        if check.errors:
            return None, check.errors
        ident = check.ident(src.get("id", value.get("id")), "source_example.id")
        topic = check.topic(src.get("topic") or value.get("topic"), "source_example.topic")
        url = check.text(src.get("url"), "source_example.url", limit=limits.url)
        source_text = check.text(src.get("text"), "source_example.text", limit=limits.source_text)
        goal = check.text(
            proc.get("goal"), "final_procedure.goal", limit=limits.goal, required=True
        )
        steps = check.string_list(
            proc.get("steps"),
            "final_procedure.steps",
            item_limit=limits.step,
            count_limit=limits.steps,
            required=True,
        )
        resources = check.string_list(
            proc.get("resources"),
            "final_procedure.resources",
            item_limit=limits.resource,
            count_limit=limits.resources,
            required=False,
        )
    else:
        check.schema_version(value, SCHEMA_VERSION_EXAMPLE)
        ident = check.ident(value.get("source_example_id", value.get("id")), "source_example_id")
        topic = check.topic(value.get("topic"), "topic")
        url = check.text(value.get("url"), "url", limit=limits.url)
        source_text = check.text(value.get("source_text"), "source_text", limit=limits.source_text)
        goal = check.text(value.get("goal"), "goal", limit=limits.goal, required=True)
        steps = check.string_list(
            value.get("steps"),
            "steps",
            item_limit=limits.step,
            count_limit=limits.steps,
            required=True,
        )
        resources = check.string_list(
            value.get("resources"),
            "resources",
            item_limit=limits.resource,
            count_limit=limits.resources,
            required=False,
        )

    if check.errors:
        return None, check.errors
    return (
        ExampleRecord(
            line=line,
            source_example_id=ident,
            topic_slug=topic,
            goal=goal,
            resources=resources,
            steps=steps,
            url=url,
            source_text=source_text,
        ),
        [],
    )


def _read_file(
    lines: Iterable[bytes | str], *, parse, duplicate: str, limits: Limits | None, max_errors: int
) -> ParseResult:
    """Parse every line with ``parse``; a second record for one ``source_example_id`` is an error
    (``duplicate`` names what was repeated). Once the file is refused no records are kept."""
    limits = limits or Limits()
    errors = ErrorCollector(cap=max_errors)
    records: list = []
    first_line: dict[str, int] = {}
    for number, value in iter_json_lines(lines):
        if isinstance(value, RecordError):
            errors.add(value)
            continue
        record, problems = parse(value, line=number, limits=limits)
        if problems:
            errors.extend(problems)
            continue
        previous = first_line.setdefault(record.source_example_id, number)
        if previous != number:
            errors.add(
                RecordError(
                    number,
                    "source_example_id",
                    f"{duplicate} {record.source_example_id!r} (first on line {previous})",
                )
            )
            continue
        if not errors:
            records.append(record)
    return ParseResult(records=records if not errors else [], errors=errors)


def read_examples(
    lines: Iterable[bytes | str],
    *,
    limits: Limits | None = None,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> ParseResult:
    """Parse and validate a whole example file; duplicates of ``source_example_id`` are errors."""
    return _read_file(
        lines,
        parse=parse_example,
        duplicate="duplicate source_example_id",
        limits=limits,
        max_errors=max_errors,
    )


# --- generations -----------------------------------------------------------------------------------


def parse_generation(
    value: Any, *, line: int, limits: Limits
) -> tuple[GenerationRecord | None, list[RecordError]]:
    check = _Checker(line, limits)
    if not isinstance(value, dict):
        check.error(None, f"expected a JSON object, got {_type_name(value)}")
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
    generator_id = check.text(value.get("generator_id"), "generator_id", limit=limits.id)
    generator_model = ""
    info = value.get("generator")
    if info is not None and not isinstance(info, dict):
        check.error("generator", f"must be an object, got {_type_name(info)}")
    elif isinstance(info, dict):
        generator_model = check.text(info.get("model"), "generator.model", limit=limits.id)
    if not generator_model and "model" in value:
        generator_model = check.text(value.get("model"), "model", limit=limits.id)
    # Carried procedure fields (goal, steps, resources, topic) come from the stored procedure;
    # only their types are checked so that a malformed file is not half-understood.
    for name in ("goal", "topic"):
        if value.get(name) is not None and not isinstance(value[name], str):
            check.error(name, f"must be a string, got {_type_name(value[name])}")
    for name in ("steps", "resources"):
        if value.get(name) is not None and not isinstance(value[name], list):
            check.error(name, f"must be a list of strings, got {_type_name(value[name])}")
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
    return _read_file(
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
            )
        out.append(r)
    return out


# --- export records ---------------------------------------------------------------------------------


def topic_display(slug: str | None) -> str:
    return topic_name(slug) if slug else ""


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
    return record


def dumps_line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def split_dataset_spec(spec: str) -> tuple[str, str | None]:
    """``"name@v2"`` → ``("name", "v2")``; ``"name"`` → ``("name", None)``."""
    name, sep, version = spec.rpartition("@")
    if not sep:
        return spec, None
    return name, version or None
