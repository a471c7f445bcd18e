"""The alt-test reference repository's data format (nitaytech/AltTest ``data/``), checked. Pure.

- humans: ``{annotator: {instance: label}}``;
- LLMs: ``{llm_name: {instance: label}}`` (every LLM in the file is tested).

A label is a string or a number (``neg_rmse`` needs numbers); ids and labels pass the text
gate (:mod:`core.text`). Every problem is an :class:`AltTestFormatError` naming the file and
the key."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from core.text import first_bad_text

MAX_BYTES = 200 * 1024 * 1024


class AltTestFormatError(ValueError):
    pass


def read_json(path: str | Path, *, option: str) -> Any:
    """The JSON value in ``path``; errors name the option and the file."""
    p = Path(path)
    where = f"{option} {p}"
    if not p.is_file():
        raise AltTestFormatError(f"{where}: no such file")
    if p.stat().st_size > MAX_BYTES:
        raise AltTestFormatError(f"{where}: larger than {MAX_BYTES // 2**20} MiB")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise AltTestFormatError(f"{where}: not UTF-8 text ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise AltTestFormatError(
            f"{where}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc


def _label_ok(value: Any, *, numeric: bool) -> bool:
    if isinstance(value, bool) or value is None:
        return not numeric and isinstance(value, bool)
    if isinstance(value, int | float):
        return math.isfinite(value)
    return isinstance(value, str) and not numeric


def nested_labels(value: Any, *, where: str, outer: str, numeric: bool) -> dict[str, dict]:
    """``{outer key: {instance: label}}`` checked: objects of objects, non-empty, labels
    strings or numbers (numbers only when ``numeric``)."""
    if not isinstance(value, dict) or not value:
        raise AltTestFormatError(
            f"{where}: expected a non-empty JSON object {{{outer}: {{instance: label}}}}"
        )
    bad = first_bad_text(value)
    if bad:
        raise AltTestFormatError(f"{where}: {bad[1]}")
    kind = "a number" if numeric else "a string or a number"
    for key, labels in value.items():
        if not isinstance(labels, dict):
            raise AltTestFormatError(
                f"{where}: {outer} {key!r} must map instance ids to labels (a JSON object)"
            )
        for instance, label in labels.items():
            if not _label_ok(label, numeric=numeric):
                raise AltTestFormatError(
                    f"{where}: {outer} {key!r}, instance {instance!r}: the label must be {kind}, "
                    f"got {json.dumps(label)[:60]}"
                )
    return value
