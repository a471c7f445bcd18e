"""Streaming exports, one home: rows as JSONL or CSV lines, and the download response.

- :func:`jsonl_lines`: one JSON object a line, UTF-8 text kept as it is (``ensure_ascii=False``).
- :func:`csv_lines`: the header first, then one line a row in ``fields`` order; a list or an
  object in a cell is written as JSON text, ``None`` as an empty cell.
- :func:`export_lines`: either of the two by format name (``"jsonl"`` or ``"csv"``).
- :func:`copied_lines`: lines that PostgreSQL writes itself (``COPY (query) TO STDOUT``), read
  in blocks of bytes, so a million-line export costs the web process next to nothing a line.
- :func:`streaming_download`: a ``StreamingHttpResponse`` that downloads the lines as a file.
- :func:`write_lines`: the lines to standard output or, for a management command's
  ``--output``, to a file that appears whole or not at all.

The line generators are lazy (a row is read only when its line is sent).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from django.db import connections, transaction
from django.db.models import QuerySet
from django.http import StreamingHttpResponse

EXPORT_FORMATS = ("jsonl", "csv")
CONTENT_TYPES = {
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
}


class _Echo:
    """A file-like object whose ``write`` returns the text: ``csv.writer`` then yields lines."""

    def write(self, value: str) -> str:
        return value


def jsonl_lines(rows: Iterable[Any]) -> Iterator[str]:
    """One JSON document a line, each ending in ``\\n``."""
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: lists and objects as JSON text, ``None`` as empty."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else value


def csv_lines(rows: Iterable[Mapping[str, Any]], fields: Sequence[str]) -> Iterator[str]:
    """The header line, then one CSV line a row (its ``fields``, in that order)."""
    writer = csv.writer(_Echo())
    yield writer.writerow(fields)
    for row in rows:
        yield writer.writerow([csv_cell(row[f]) for f in fields])


def export_lines(
    rows: Iterable[Mapping[str, Any]], *, fields: Sequence[str], fmt: str
) -> Iterator[str]:
    """:func:`jsonl_lines` or :func:`csv_lines` by ``fmt``; ``ValueError`` for another format."""
    if fmt == "jsonl":
        return jsonl_lines(rows)
    if fmt == "csv":
        return csv_lines(rows, fields)
    raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")


COPY_BLOCK_BYTES = 128 * 1024


def copied_lines(queryset: QuerySet, *, block_bytes: int = COPY_BLOCK_BYTES) -> Iterator[bytes]:
    """The lines of ``queryset`` (PostgreSQL only), whose one selected column is each line's text
    without its end, as PostgreSQL writes them with ``COPY (query) TO STDOUT``: blocks of about
    ``block_bytes`` of whole lines, each ending in ``\\n``, in the queryset's order.

    COPY's text format doubles each backslash of a value and writes control characters
    (tab, newline, ...) as backslash escapes; only the doubled backslashes are undone here, so
    a line must hold no control character: JSON text never does (JSON writes them as escapes).
    A download closed early closes the generator: psycopg cancels the COPY, and the COPY's own
    transaction (a savepoint inside another) is rolled back, so the connection stays usable."""
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    statement = f"COPY ({sql}) TO STDOUT"
    with (
        transaction.atomic(using=queryset.db),
        connections[queryset.db].cursor() as cursor,
        cursor.copy(statement, params) as copy,
    ):
        block: list = []
        size = 0
        for data in copy:
            block.append(data)
            size += len(data)
            if size >= block_bytes:
                yield b"".join(block).replace(b"\\\\", b"\\")
                block = []
                size = 0
        if block:
            yield b"".join(block).replace(b"\\\\", b"\\")


def streaming_download(
    lines: Iterable[str | bytes], *, filename: str, content_type: str | None = None
) -> StreamingHttpResponse:
    """A response that streams ``lines`` as the attachment ``filename``. The content type is
    the one of the file's extension (``.jsonl``, ``.csv``) unless ``content_type`` is given."""
    if content_type is None:
        extension = filename.rpartition(".")[2]
        if extension not in CONTENT_TYPES:
            raise ValueError(f"no content type known for {filename!r}; pass content_type")
        content_type = CONTENT_TYPES[extension]
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def write_lines(lines: Iterable[str], *, stdout: TextIO, output: str | None = None) -> int:
    """Write ``lines`` to ``stdout``, or to the file ``output`` through a temporary file in the
    same folder renamed at the end (an interrupted export never leaves a half-written file).
    Returns the number of lines written; ``OSError`` when the file cannot be written."""
    if not output:
        return _write_all(lines, stdout)
    target = Path(output)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            n = _write_all(lines, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def _write_all(lines: Iterable[str], out: TextIO) -> int:
    n = 0
    for line in lines:
        out.write(line)
        n += 1
    return n
