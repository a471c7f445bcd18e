"""The label file of the agreement report: one annotator's label for one item a row (long
format), read from a CSV by :func:`parse_label_csv` (``manage.py agreement_report``) or built
from the study models (:mod:`annotation.selectors.report`). Pure Python.

Every problem in a file is a :class:`LabelFileError` naming the line and the field.
"""

from __future__ import annotations

import csv
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

REQUIRED_COLUMNS = ("item_id", "annotator_id", "label")
STEP_COLUMN = "first_failure_step"


class LabelFileError(ValueError):
    """A malformed label file; the message names the line and the field."""

    def __init__(self, message: str, *, line: int | None = None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


@dataclass(frozen=True)
class LabelRow:
    """One annotator's label for one item (long format)."""

    item_id: str
    annotator_id: str
    label: Hashable
    first_failure_step: int | None = None
    groups: Mapping[str, str] = field(default_factory=dict)
    line: int | None = None


@dataclass(frozen=True)
class LabelFile:
    rows: list[LabelRow]
    has_location: bool  # the file has a first_failure_step column
    columns: tuple[str, ...]


def parse_label_csv(stream: IO[str], *, group_columns: Sequence[str] = ()) -> LabelFile:
    """Parse ``item_id,annotator_id,label[,first_failure_step][,<group columns>...]``.

    Other columns are ignored. ``first_failure_step``, when present, is empty (no failure
    located) or a whole number ≥ 1. Every problem is a :class:`LabelFileError` naming the line
    (1 = the header) and the field; a repeated (item, annotator) pair names both lines; an
    item given two different group values names both lines. Nothing is returned half-read.
    """
    reader = csv.reader(stream)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise LabelFileError(f"not a readable CSV header ({exc})", line=1) from None
    if header is None:
        raise LabelFileError(
            "the file is empty; expected a header line: " + ",".join(REQUIRED_COLUMNS)
        )
    columns = tuple(h.lstrip("\ufeff").strip().lower() for h in header)
    wanted = tuple(REQUIRED_COLUMNS) + tuple(c.lower() for c in group_columns)
    missing = [c for c in wanted if c not in columns]
    if missing:
        raise LabelFileError(
            f"missing column(s) {', '.join(repr(c) for c in missing)} in the header "
            f"(found: {', '.join(columns) or 'nothing'})",
            line=1,
        )
    duplicated = sorted({c for c in columns if c and columns.count(c) > 1})
    if duplicated:
        raise LabelFileError(f"column(s) {', '.join(map(repr, duplicated))} appear twice", line=1)
    index = {c: i for i, c in enumerate(columns)}
    has_location = STEP_COLUMN in index
    group_keys = [c.lower() for c in group_columns]

    rows: list[LabelRow] = []
    seen_pairs: dict[tuple[str, str], int] = {}
    item_groups: dict[tuple[str, str], tuple[str, int]] = {}
    for line, record in numbered_rows(reader, LabelFileError):
        if len(record) != len(columns):
            raise LabelFileError(
                f"expected {len(columns)} fields like the header, found {len(record)}", line=line
            )
        values = {c: record[i].strip() for c, i in index.items()}
        for column in (*REQUIRED_COLUMNS, *group_keys):
            if not values[column]:
                raise LabelFileError(f"empty field {column!r}", line=line)
        item, annotator = values["item_id"], values["annotator_id"]
        step = _parse_step(values[STEP_COLUMN], line) if has_location else None
        earlier = seen_pairs.setdefault((item, annotator), line)
        if earlier != line:
            raise LabelFileError(
                f"item {item!r} is labelled twice by annotator {annotator!r} "
                f"(lines {earlier} and {line})",
                line=line,
            )
        groups = {}
        for column in group_keys:
            value = values[column]
            first, first_line = item_groups.setdefault((column, item), (value, line))
            if first != value:
                raise LabelFileError(
                    f"item {item!r} has {column} {value!r} but line {first_line} gave {first!r}",
                    line=line,
                )
            groups[column] = value
        rows.append(LabelRow(item, annotator, values["label"], step, groups, line))
    return LabelFile(rows=rows, has_location=has_location, columns=columns)


def numbered_rows(reader, error: type[Exception]) -> Iterator[tuple[int, list[str]]]:
    """The rows of a CSV reader past its header, blank lines left out, each with the number of
    the line it starts on; a row the CSV module cannot read raises ``error(message, line=…)``
    naming that line."""
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise error(f"not valid CSV ({exc})", line=start) from None
        if row is None:
            return
        if any(cell.strip() for cell in row):
            yield start, row


def _parse_step(raw: str, line: int) -> int | None:
    if raw == "":
        return None
    try:
        step = int(raw)
    except ValueError:
        step = None
    if step is None or step < 1:
        raise LabelFileError(
            f"bad {STEP_COLUMN} {raw!r}: expected a whole number ≥ 1 (the 1-based step) or empty",
            line=line,
        )
    return step
