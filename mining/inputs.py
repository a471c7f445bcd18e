"""Turning one input record into a mining document. Pure Python, no Django.

Accepted fields: ``text`` (the web document), ``url``, ``topic`` (a WebOrganizer topic name,
slug or label), ``id`` (or ``source_example_id``; default: ``line-N``), and optionally an already
extracted ``goal`` with ``steps`` (a list, or one step per line) and ``resources``; records that
carry them skip stage 1. How2Mine export records (``source_example`` + ``final_procedure``) are
accepted as they are, so mined procedures can be filtered again.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from benchmarks.topics import topic_slug

_topic_slug = lru_cache(maxsize=4096)(topic_slug)  # a corpus names few topics, many times

DEFAULT_MAX_DOC_CHARS = 100_000


@dataclass
class DocInput:
    line: int
    source_id: str
    topic_raw: str = ""
    topic: str | None = None  # slug
    url: str = ""
    text: str = ""
    goal: str = ""
    steps: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problem: str | None = None  # why the document cannot be mined (recorded, never raised)

    @property
    def has_procedure(self) -> bool:
        return bool(self.goal) and bool(self.steps)


def _as_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):  # NaN from CSV/Parquet
        return ""
    return value if isinstance(value, str) else str(value)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                return [str(v).strip() for v in parsed if str(v).strip()]
        return [line.strip() for line in text.splitlines() if line.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


# The fields a column map may rename: the input's own column names for them.
COLUMN_FIELDS = ("text", "url", "topic", "id")


def clean_column_map(value: Any) -> dict[str, str]:
    """A batch's ``columns`` option checked: ``{"text": "body", "topic": "category"}`` says which
    input column holds each field. Raises ``ValueError`` naming the bad entry."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, dict):
        raise ValueError(
            f'columns must be an object such as {{"text": "body"}}, not {type(value).__name__}'
        )
    unknown = sorted(set(value) - set(COLUMN_FIELDS))
    if unknown:
        raise ValueError(
            f"columns: unknown field(s) {', '.join(map(repr, unknown))}; "
            f"map any of {', '.join(COLUMN_FIELDS)}"
        )
    out: dict[str, str] = {}
    for key, column in value.items():
        if not isinstance(column, str) or not column.strip():
            raise ValueError(f"columns.{key} must be a column name, got {column!r}")
        out[key] = column.strip()
    return out


def map_columns(data: dict[str, Any], columns: dict[str, str]) -> dict[str, Any]:
    """The record with each mapped field read from its column (absent column: absent field)."""
    if not columns:
        return data
    out = dict(data)
    for key, column in columns.items():
        if column in data:
            out[key] = data[column]
        else:
            out.pop(key, None)
    return out


def document_from_record(
    data: dict[str, Any],
    *,
    line: int,
    max_chars: int = DEFAULT_MAX_DOC_CHARS,
    require_topic: bool = True,
) -> DocInput:
    src = data.get("source_example") if isinstance(data.get("source_example"), dict) else None
    proc = data.get("final_procedure") if isinstance(data.get("final_procedure"), dict) else None
    base = src or data
    source_id = _as_str(base.get("id") or data.get("source_example_id") or data.get("id")).strip()
    doc = DocInput(line=line, source_id=source_id[:255] or f"line-{line}")
    doc.url = _as_str(base.get("url")).strip()[:2000]
    doc.topic_raw = _as_str(base.get("topic")).strip()
    proc = proc or data
    doc.goal = _as_str(proc.get("goal")).strip()
    doc.steps = _as_list(proc.get("steps"))
    doc.resources = _as_list(proc.get("resources"))
    text = base.get("text", base.get("source_text"))
    doc.text = _as_str(text)

    if doc.topic_raw:
        doc.topic = _topic_slug(doc.topic_raw)
        if doc.topic is None and require_topic:
            doc.problem = (
                f"unknown topic {doc.topic_raw[:80]!r} (not one of the 14 WebOrganizer topics)"
            )
            return doc
    elif require_topic:
        doc.problem = "missing field 'topic'"
        return doc
    if bool(doc.goal) != bool(doc.steps):
        doc.problem = "record has 'goal' without 'steps' (or 'steps' without 'goal')"
        return doc
    if not doc.has_procedure:
        if text is None:
            doc.problem = "missing field 'text'"
            return doc
        if not doc.text.strip():
            doc.problem = "empty document: field 'text' is blank"
            return doc
    if "\x00" in doc.text:
        doc.text = doc.text.replace("\x00", "")
        doc.notes.append("removed NUL characters")
    if len(doc.text) > max_chars:
        doc.notes.append(f"document truncated from {len(doc.text)} to {max_chars} characters")
        doc.text = doc.text[:max_chars]
    return doc
