"""What the JSONL formats share: size limits, errors with line numbers, line reading, field checks.

Pure Python, no Django. Every problem becomes a :class:`RecordError` naming the line number
and the field; an :class:`ErrorCollector` keeps the first few and counts them all, and
:func:`read_file` refuses a whole file once any line is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.topics import topic_name, topic_slug
from core.text import strip_value, stripped_note

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


@dataclass
class ParseResult:
    records: list
    errors: ErrorCollector
    notes: list[str] = field(default_factory=list)  # lines cleaned of control characters


# --- reading lines --------------------------------------------------------------------------


def iter_json_lines(
    lines: Iterable[bytes | str], notes: list[str] | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every non-blank line; ``value`` is the decoded JSON,
    or a :class:`RecordError` for invalid UTF-8 or malformed JSON. NUL and other control
    characters (core.text) are stripped from the strings, each such line noted in ``notes``."""
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
        except RecursionError:
            yield number, RecordError(number, None, "JSON nested too deeply to read")
            continue
        try:
            value, removed = strip_value(value)
        except RecursionError:
            yield number, RecordError(number, None, "JSON nested too deeply to read")
            continue
        if removed and notes is not None:
            notes.append(stripped_note(number, removed))
        yield number, value


def read_file(
    lines: Iterable[bytes | str],
    *,
    parse: Callable[..., tuple[Any, list[RecordError]]],
    duplicate: str,
    limits: Limits | None,
    max_errors: int,
) -> ParseResult:
    """Parse every line with ``parse``; a second record for one ``source_example_id`` is an error
    (``duplicate`` names what was repeated). Once the file is refused no records are kept."""
    limits = limits or Limits()
    errors = ErrorCollector(cap=max_errors)
    records: list = []
    notes: list[str] = []
    first_line: dict[str, int] = {}
    for number, value in iter_json_lines(lines, notes):
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
    return ParseResult(records=records if not errors else [], errors=errors, notes=notes)


# --- field checks ---------------------------------------------------------------------------


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for messages (``object``, ``array``, ``null`` …)."""
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


class Checker:
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
            self.error(name, f"must be a string, got {type_name(value)}")
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
            self.error(name, f"must be a list of strings, got {type_name(value)}")
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
                self.error(item_name, f"must be a string, got {type_name(item)}")
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
            self.error(name, f"must be a string, got {type_name(value)}")
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


# --- writing --------------------------------------------------------------------------------


def topic_display(slug: str | None) -> str:
    return topic_name(slug) if slug else ""


def dumps_line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"
