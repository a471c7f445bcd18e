"""Analysis tables as CSV text (the JSON export is the report dict itself)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """One line per row with ``columns`` as the header; missing values are empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    return buffer.getvalue()
