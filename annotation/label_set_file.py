"""The label-set file: every label of a study — people's and judges' — in one long table, one
label a row, as CSV or JSON Lines. Pure Python (no Django).

Columns (CSV header, or JSON keys): ``item_id``, ``source`` (an annotator's or a judge's name),
``kind`` (``human`` or ``judge``), ``label`` (a category — ``0``/``1`` for a critical failure,
or any short text — or a number), and optionally ``group`` (the model or generator the item
belongs to, for a score per model) and ``text`` (reasoning or a description).

It feeds the agreement report (``manage.py agreement_report --labels``), the alt-test, the
PPI-corrected How2Score and the disagreement list (:mod:`validation.label_sets`). It lives in
this app because the agreement report is this app's; the validation app builds on it.

:func:`parse_label_set` reads bytes and returns :class:`LabelSet` or raises
:class:`LabelSetError`, whose message names the line and the column. A file is refused whole:
the caller stores nothing from it. Refused: an empty file, a file over ``max_bytes``, text that
is not UTF-8, a NUL or other control character, a missing or repeated column, an unknown
``kind``, an empty field, an over-long field, a source given as both kinds, an item labelled
twice by one source, an item given two groups (a row may leave ``group`` empty: it takes its item's).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from annotation.label_file import LabelRow, numbered_rows
from core.text import text_error

REQUIRED = ("item_id", "source", "kind", "label")
OPTIONAL = ("group", "text")
COLUMNS = REQUIRED + OPTIONAL
KINDS = ("human", "judge")
HUMAN, JUDGE = KINDS
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_ID = 255  # item_id, source, group
MAX_LABEL = 100  # a label is a category or a number: short
MAX_TEXT = 10_000

# what the labels of a file are, which decides how they are scored
BINARY, NUMERIC, CATEGORICAL = "binary", "numeric", "categorical"


class LabelSetError(ValueError):
    """A refused label-set file; the message names the line and the column where it can."""

    def __init__(self, message: str, *, line: int | None = None, column: str | None = None):
        self.line, self.column = line, column
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


@dataclass(frozen=True)
class Label:
    """One label: ``label`` as text (numbers as written, ``1.0`` from JSON as ``1``)."""

    item_id: str
    source: str
    kind: str
    label: str
    group: str = ""
    text: str = ""
    line: int = 0


@dataclass(frozen=True)
class LabelSet:
    labels: list[Label]
    file_format: str  # "csv" or "jsonl"

    def of_kind(self, kind: str) -> list[Label]:
        return [x for x in self.labels if x.kind == kind]

    def sources(self, kind: str) -> list[str]:
        """The sources of ``kind`` in the order they first appear."""
        return list(dict.fromkeys(x.source for x in self.labels if x.kind == kind))

    @property
    def groups(self) -> list[str]:
        return sorted({x.group for x in self.labels if x.group})

    @property
    def label_kind(self) -> str:
        """``binary`` (every label 0 or 1), ``numeric`` (every label a number) or
        ``categorical``."""
        return label_kind(x.label for x in self.labels)

    @property
    def categories(self) -> list[str]:
        return sorted({x.label for x in self.labels})

    def counts(self) -> dict[str, int]:
        items = {x.item_id for x in self.labels}
        return {
            "n_labels": len(self.labels),
            "n_items": len(items),
            "n_human_items": len({x.item_id for x in self.of_kind(HUMAN)}),
            "n_judge_items": len({x.item_id for x in self.of_kind(JUDGE)}),
            "n_annotators": len(self.sources(HUMAN)),
            "n_judges": len(self.sources(JUDGE)),
            "n_groups": len(self.groups),
        }


def as_number(label: str) -> float | None:
    try:
        value = float(label)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def label_kind(labels: Iterable[str]) -> str:
    labels = set(labels)
    if labels and labels <= {"0", "1"}:
        return BINARY
    if labels and all(as_number(x) is not None for x in labels):
        return NUMERIC
    return CATEGORICAL


def agreement_rows(label_set: LabelSet) -> list[LabelRow]:
    """The people's labels as the agreement report's rows (``group`` as a grouping column)."""
    return [
        LabelRow(x.item_id, x.source, x.label, None, {"group": x.group}, x.line)
        for x in label_set.of_kind(HUMAN)
    ]


# --- reading ---------------------------------------------------------------------------------


def read_label_set(path: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> LabelSet:
    """:func:`parse_label_set` of the file at ``path`` (the commands' ``--labels``); its size is
    checked before it is read."""
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise LabelSetError(f"{path}: no such file")
    size = p.stat().st_size
    if size > max_bytes:
        raise LabelSetError(
            f"{path}: {size / 2**20:.1f} MiB, over the limit of {max_bytes / 2**20:.0f} MiB "
            "(LABEL_SET_MAX_BYTES)"
        )
    try:
        return parse_label_set(p.read_bytes(), name=p.name, max_bytes=max_bytes)
    except LabelSetError as exc:
        raise LabelSetError(f"{path} {exc}") from None


def parse_label_set(data: bytes, *, name: str = "", max_bytes: int = DEFAULT_MAX_BYTES) -> LabelSet:
    """The label set in ``data`` (CSV, or JSON Lines when ``name`` ends in ``.jsonl``/``.json``
    or the first character is ``{``); see the module docstring for what is refused."""
    if len(data) > max_bytes:
        raise LabelSetError(
            f"the file is {len(data) / 2**20:.1f} MiB, over the limit of "
            f"{max_bytes / 2**20:.0f} MiB; split it or keep only the labels"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LabelSetError(f"not UTF-8 text (byte {exc.start + 1})", line=line) from None
    if not text.strip():
        raise LabelSetError(
            "the file is empty; expected a header line " + ",".join(REQUIRED) + " and one label "
            "a line"
        )
    _refuse_controls(text)
    jsonl = name.lower().endswith((".jsonl", ".json", ".ndjson")) or text.lstrip().startswith("{")
    records = _jsonl_records(text) if jsonl else _csv_records(text)
    return LabelSet(labels=_check(records), file_format="jsonl" if jsonl else "csv")


def _refuse_controls(text: str) -> None:
    for number, line in enumerate(text.split("\n"), start=1):
        message = text_error(line.rstrip("\r"), "text")
        if message:
            position = message.split(" at character ")[1].split(";")[0]
            what = message.split("(", 1)[1].split(")")[0]
            raise LabelSetError(
                f"contains a control character ({what}) at character {position} of the line; "
                "remove it (only tab is allowed inside a line)",
                line=number,
            )


def _csv_records(text: str) -> Iterable[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except csv.Error as exc:
        raise LabelSetError(f"not a readable CSV header ({exc})", line=1) from None
    columns = [h.strip().lower() for h in header]
    _check_columns(columns)
    records = []
    for start, row in numbered_rows(reader, LabelSetError):
        if len(row) != len(columns):
            raise LabelSetError(
                f"expected {len(columns)} fields like the header ({', '.join(columns)}), "
                f"found {len(row)}",
                line=start,
            )
        records.append((start, {c: v.strip() for c, v in zip(columns, row, strict=True)}))
    return records


def _check_columns(columns: list[str], *, line: int = 1) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise LabelSetError(
            f"missing column(s) {', '.join(missing)} (found: {', '.join(columns) or 'nothing'}; "
            f"expected {', '.join(REQUIRED)} and optionally {', '.join(OPTIONAL)})",
            line=line,
        )
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise LabelSetError(
            f"unknown column(s) {', '.join(repr(c) for c in unknown)}; the columns are "
            f"{', '.join(REQUIRED)} and optionally {', '.join(OPTIONAL)}",
            line=line,
        )
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise LabelSetError(f"column(s) {', '.join(twice)} appear twice", line=line)


def _jsonl_records(text: str) -> Iterable[tuple[int, dict[str, str]]]:
    records = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise LabelSetError(
                f"not JSON (character {exc.colno}: {exc.msg}); one JSON object a line",
                line=number,
            ) from None
        if not isinstance(value, dict):
            raise LabelSetError(
                "expected a JSON object {item_id, source, kind, label}", line=number
            )
        _check_columns([str(k).strip().lower() for k in value], line=number)
        record = {}
        for key, item in value.items():
            column = str(key).strip().lower()
            record[column] = _json_text(item, line=number, column=column)
        records.append((number, record))
    return records


def _json_text(value, *, line: int, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        raise LabelSetError("expected text or a number, got true/false; write 1 or 0", line=line,
                            column=column)  # fmt: skip
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise LabelSetError("expected a finite number", line=line, column=column)
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        message = text_error(value, column)
        if message:
            raise LabelSetError(message.split(": ", 1)[1], line=line, column=column)
        return value.strip()
    raise LabelSetError("expected text or a number, not a list or an object", line=line,
                        column=column)  # fmt: skip


def _check(records: Iterable[tuple[int, dict[str, str]]]) -> list[Label]:
    labels: list[Label] = []
    kind_of: dict[str, tuple[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    group_of: dict[str, tuple[str, int]] = {}
    for line, record in records:
        for column in REQUIRED:
            if not record.get(column, ""):
                raise LabelSetError("empty; every row needs a value here", line=line,
                                    column=column)  # fmt: skip
        for column, limit in (("item_id", MAX_ID), ("source", MAX_ID), ("group", MAX_ID),
                              ("label", MAX_LABEL), ("text", MAX_TEXT)):  # fmt: skip
            value = record.get(column, "")
            if len(value) > limit:
                raise LabelSetError(
                    f"{len(value):,} characters, over the limit of {limit:,}",
                    line=line,
                    column=column,
                )
        kind = record["kind"].lower()
        if kind not in KINDS:
            raise LabelSetError(
                f"unknown kind {record['kind']!r}; expected human or judge", line=line,
                column="kind",
            )  # fmt: skip
        item, source, group = record["item_id"], record["source"], record.get("group", "")
        first_kind, first_line = kind_of.setdefault(source, (kind, line))
        if first_kind != kind:
            raise LabelSetError(
                f"source {source!r} is {kind} here but {first_kind} on line {first_line}; a "
                "source is one annotator or one judge",
                line=line,
                column="kind",
            )
        earlier = seen.setdefault((item, source), line)
        if earlier != line:
            raise LabelSetError(
                f"item {item!r} is labelled twice by {source!r} (lines {earlier} and {line})",
                line=line,
                column="item_id",
            )
        first_group, group_line = group_of.setdefault(item, (group, line))
        if not first_group and group:
            group_of[item] = (group, line)
        elif group and first_group != group:
            raise LabelSetError(
                f"item {item!r} is in group {group!r} here but {first_group!r} on line "
                f"{group_line}; an item belongs to one group",
                line=line,
                column="group",
            )
        labels.append(
            Label(item, source, kind, record["label"], group, record.get("text", ""), line)
        )
    if not labels:
        raise LabelSetError("no label rows: the file has a header and nothing else")
    # a row that leaves ``group`` empty takes its item's group from the other rows
    return [
        x if x.group == group_of[x.item_id][0] else replace(x, group=group_of[x.item_id][0])
        for x in labels
    ]
