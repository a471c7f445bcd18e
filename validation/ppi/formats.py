"""The CSV files of ``manage.py how2score_ppi`` (pure): labelled ``id,human,judge`` and
unlabelled ``id,judge``, has_failure as 0 or 1. Control characters are stripped by the text
gate (:func:`core.text.strip_controls`) with the line named; every problem is a
:class:`PPIFormatError` naming the file, the line and the column."""

from __future__ import annotations

import csv
from pathlib import Path

from core.text import strip_controls

MAX_BYTES = 200 * 1024 * 1024
MAX_ID = 255


class PPIFormatError(ValueError):
    pass


def read_rows(
    path: str | Path, *, option: str, columns: tuple[str, ...], empty_hint: str = ""
) -> tuple[list[tuple[str, ...]], list[str]]:
    """``(rows, warnings)``: one tuple per data line (the id, then 0/1 ints) in ``columns``'
    order; ``warnings`` name the lines whose control characters were stripped."""
    p = Path(path)
    where = f"{option} {p}"
    if not p.is_file():
        raise PPIFormatError(f"{where}: no such file")
    if p.stat().st_size > MAX_BYTES:
        raise PPIFormatError(f"{where}: larger than {MAX_BYTES // 2**20} MiB")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PPIFormatError(f"{where}: not UTF-8 text ({exc.reason})") from exc
    text, n_stripped = strip_controls(text)
    warnings = [f"{where}: {n_stripped} control character(s) removed"] if n_stripped else []
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in columns if c not in header]
    if missing:
        raise PPIFormatError(
            f"{where}: missing column(s) {', '.join(missing)} (header: {', '.join(header) or 'none'};"
            f" expected {','.join(columns)})"
        )
    reader.fieldnames = header
    rows, seen = [], set()
    for line, record in enumerate(reader, start=2):
        ident = (record.get("id") or "").strip()
        if not ident or len(ident) > MAX_ID:
            raise PPIFormatError(f"{where} line {line}: id must be 1 to {MAX_ID} characters")
        if ident in seen:
            raise PPIFormatError(f"{where} line {line}: id {ident!r} appears twice")
        seen.add(ident)
        values = []
        for column in columns[1:]:
            raw = (record.get(column) or "").strip()
            if raw not in ("0", "1"):
                raise PPIFormatError(
                    f"{where} line {line}, column {column}: has_failure must be 0 or 1, got {raw!r}"
                )
            values.append(int(raw))
        rows.append((ident, *values))
    if not rows:
        raise PPIFormatError(f"{where}: no data rows{empty_hint}")
    return rows, warnings
