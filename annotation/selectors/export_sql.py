"""A study's annotation export as JSONL, the lines written by PostgreSQL.

:func:`study_export_jsonl` is what the export download sends. On PostgreSQL the database
builds each line (:func:`study_export_line_queryset`) and the web process moves blocks of bytes
(:func:`core.streaming.copied_lines`); on another database (the embedded SQLite) the lines are
:func:`annotation.selectors.flow.study_export_rows` written by :func:`core.streaming.jsonl_lines`.

The SQL writes the text that ``json.dumps(row, ensure_ascii=False)`` writes for a row of
:func:`~annotation.selectors.flow.study_export_rows`: the keys of
:data:`~annotation.selectors.flow.EXPORT_FIELDS` in order, ``", "`` and ``": "`` between them,
strings escaped as Python escapes them (``\\"``, ``\\\\``, ``\\n`` and the other control
characters, text outside ASCII as it is), times as ``datetime.isoformat()`` in UTC. The stored
JSON of ``failures`` and ``label`` is written as PostgreSQL's ``jsonb`` text, which is Python's
for every value the forms store; a number stored with an exponent (``1e-05``) would read
``0.00001``, the same number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.db import connections
from django.db.models import Case, F, Func, Q, QuerySet, TextField, Value, When
from django.db.models.expressions import Combinable

from annotation.models import Annotation, Study, StudyItem
from annotation.selectors.flow import EXPORT_FIELDS, study_export_queryset, study_export_rows
from core.streaming import copied_lines, jsonl_lines

_TEXT = TextField()


class _Joined(Func):
    """Its expressions' texts one after the other."""

    template = "(%(expressions)s)"
    arg_joiner = " || "
    output_field = _TEXT


def _json(expression: Combinable | str) -> Func:
    """A number, string or boolean as JSON text; ``null`` for NULL."""
    return Func(
        F(expression) if isinstance(expression, str) else expression,
        template="COALESCE(to_json(%(expressions)s)::text, 'null')",
        output_field=_TEXT,
    )


def _json_bool(path: str) -> Func:
    """A boolean as JSON text, ``null`` for NULL (cheaper than ``to_json`` for a boolean)."""
    return Func(
        F(path),
        template=(
            "CASE WHEN %(expressions)s THEN 'true' WHEN NOT %(expressions)s THEN 'false' "
            "ELSE 'null' END"
        ),
        output_field=_TEXT,
    )


def _stored_json(path: str) -> Func:
    """A ``jsonb`` column as its text."""
    return Func(F(path), template="(%(expressions)s)::text", output_field=_TEXT)


def _isoformat(path: str) -> Func:
    """A time as the JSON string of ``datetime.isoformat()`` in UTC (microseconds only when not
    zero)."""
    return Func(
        F(path),
        template=(
            "('\"' || replace(to_char(%(expressions)s AT TIME ZONE 'UTC', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS.US'), '.000000', '') || '+00:00\"')"
        ),
        output_field=_TEXT,
    )


def _first_failure_step() -> Func:
    """:func:`annotation.labels.first_failure_step`: the smallest of the failures' L2 steps
    (a failure's missing or null ``l2_steps`` has none); ``null`` without failures."""
    return Func(
        F("failures"),
        template=(
            "CASE WHEN %(expressions)s = '[]'::jsonb THEN 'null' ELSE COALESCE((SELECT "
            "min(step::numeric)::text FROM jsonb_path_query(%(expressions)s, "
            "'$[*].l2_steps[*] ? (@.type() == \"number\")') AS step), 'null') END"
        ),
        output_field=_TEXT,
    )


def _attention_passed() -> Case:
    """Whether a check item's label matches its expected answer; ``null`` for a regular item
    or one without an expected answer."""
    check = ~Q(item__kind=StudyItem.Kind.REGULAR) & Q(item__expected_has_failure__isnull=False)
    return Case(
        When(check & Q(has_failure=F("item__expected_has_failure")), then=Value("true")),
        When(check, then=Value("false")),
        default=Value("null"),
        output_field=_TEXT,
    )


def _values(study: Study) -> dict[str, Combinable]:
    """Each export field's JSON text, in :data:`EXPORT_FIELDS` order."""
    return {
        "study_id": Value(json.dumps(study.pk)),
        "item_id": _json("item_id"),
        "item_kind": _json("item__kind"),
        "source_example_id": _json("item__generation__procedure__source_example_id"),
        "generation_id": _json("item__generation_id"),
        "generator": _json("item__generation__generator__name"),
        "participant_id": _json("participant_id"),
        "prolific_pid": _json("participant__prolific_pid"),
        "username": Func(
            F("participant__user__username"),
            template="COALESCE(to_json(%(expressions)s)::text, '\"\"')",
            output_field=_TEXT,
        ),
        "has_failure": _json_bool("has_failure"),
        "n_failures": Func(
            F("failures"), template="jsonb_array_length(%(expressions)s)::text", output_field=_TEXT
        ),
        "failures": _stored_json("failures"),
        "first_failure_l2_step": _first_failure_step(),
        "comments": _json("comments"),
        "label": _stored_json("label"),
        "generation_b_id": _json("item__generation_b_id"),
        "wall_ms": _json("wall_ms"),
        "active_ms": _json("active_ms"),
        "served_at": _isoformat("assignment__served_at"),
        "submitted_at": _isoformat("submitted_at"),
        "expected_has_failure": _json_bool("item__expected_has_failure"),
        "attention_passed": _attention_passed(),
        "participant_attention_failures": _json("participant__attention_failures"),
        "participant_stage": _json("participant__stage"),
    }


def study_export_line_queryset(*, study: Study) -> QuerySet[Annotation]:
    """The export's rows as one text column, each a JSONL line without its ``\\n``."""
    values = _values(study)
    assert tuple(values) == EXPORT_FIELDS
    parts: list[Combinable] = []
    for index, (name, value) in enumerate(values.items()):
        parts += [Value(("{" if index == 0 else ", ") + json.dumps(name) + ": "), value]
    parts.append(Value("}"))
    return study_export_queryset(study=study).values_list(_Joined(*parts), flat=True)


def study_export_jsonl(*, study: Study) -> Iterator[bytes] | Iterator[str]:
    """The export's JSONL lines: built by PostgreSQL and read in blocks of bytes there, one
    ``str`` a row from Python elsewhere."""
    queryset = study_export_queryset(study=study)
    if connections[queryset.db].vendor == "postgresql":
        return copied_lines(study_export_line_queryset(study=study))
    return jsonl_lines(study_export_rows(study=study))
