"""The benchmark examples of a suite config's ``inputs``: one local file, or the files of a
directory matching ``include_globs`` (not recursive, like the reference), in JSONL, CSV,
Parquet or Arrow IPC, JSONL and CSV plain or gz/zst/bz2/xz compressed (zstd through pyarrow).

Two record kinds, as the reference reads them: ``bench`` (``source_example_id`` or ``id``,
``goal``, ``steps``, ``resources``, ``topic``, ``url``, ``source_text``) and ``how2mine_export``
(``source_example: {id, topic, url, text}``, ``final_procedure: {goal, steps, resources}``);
``kind: auto`` tells them apart per record. In CSV, list fields are JSON text (``["a", "b"]``).

Unlike the reference, which skips a record without id, goal or steps silently, every such
record is an error naming the file, the line (or row) and the field, and so is an id seen
twice. Pure: no Django.
"""

from __future__ import annotations

import csv
import io
import json
import lzma
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from benchmarks.formats import RecordError, iter_json_lines
from judging.bench.spec import DATASET_ENV, DEFAULT_DATASET, Inputs
from mining import readers

MAX_ERRORS = 20


class InputsError(ValueError):
    """Inputs that cannot be used; ``lines`` name the file, the line and the field."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


@dataclass(frozen=True)
class BenchExample:
    source_example_id: str
    topic: str
    goal: str
    steps: list[str]
    resources: list[str]
    url: str = ""
    source_text: str = ""
    where: str = ""  # file:line, for messages


# --- files ----------------------------------------------------------------------------------
def input_files(inputs: Inputs) -> list[Path]:
    path = inputs.path
    if path is None:
        repo = inputs.hf_repo or DEFAULT_DATASET
        raise InputsError(
            [
                f"inputs.path: not set: how2review reads local files only and does not download "
                f"the Hugging Face dataset {repo!r}; save it locally and set inputs.path"
                + (
                    f" (or {DATASET_ENV} for the released benchmark)"
                    if repo == DEFAULT_DATASET
                    else ""
                )
            ]
        )
    if not path.exists():
        raise InputsError([f"inputs.path: {path}: no such file or directory"])
    if path.is_file():
        return [path]
    if not inputs.include_globs:
        raise InputsError(
            [
                f"inputs.include_globs: {path} is a directory: list the files to read, e.g. "
                "['*.jsonl', '*.jsonl.zst', '*.parquet']"
            ]
        )
    out: list[Path] = []
    for pattern in inputs.include_globs:  # the one glob rule (mining.readers)
        for name in readers.match_names(f"{path}/{pattern}", readers.local_listdir):
            p = Path(name)
            if p.is_file() and p not in out:
                out.append(p)
    if not out:
        raise InputsError(
            [f"inputs.include_globs: {list(inputs.include_globs)} matched no file in {path}"]
        )
    return out


def file_kind(path: Path, fmt: str = "auto", compression: str = "auto") -> tuple[str, str]:
    """(format, compression) of ``path``: as configured, else from its suffixes (the shared
    rule, :func:`mining.readers.file_kind`; an unknown suffix reads as JSONL)."""
    try:
        return readers.file_kind(str(path), fmt, compression, default="jsonl")
    except readers.UnsupportedFormat as exc:
        raise InputsError([str(exc)]) from None


@contextmanager
def open_binary(path: Path, compression: str) -> Iterator[BinaryIO]:
    if compression not in ("none", "gz", "zst", "bz2", "xz"):
        raise InputsError([f"{path}: unknown compression {compression!r}"])
    handle = readers.open_decompressed(path, compression)
    try:
        yield handle
    finally:
        handle.close()


# --- rows -----------------------------------------------------------------------------------
def iter_rows(path: Path, fmt: str, compression: str) -> Iterator[tuple[int, dict | str]]:
    """``(line or row number, record)`` or ``(number, error message)`` for each record."""
    try:
        if fmt == "jsonl":
            yield from _jsonl_rows(path, compression)
        elif fmt == "csv":
            yield from _csv_rows(path, compression)
        elif fmt in ("parquet", "arrow"):
            for rec in readers.iter_records(path, fmt, compression="none"):
                yield rec.line, (rec.data if rec.error is None else rec.error)
        else:
            raise InputsError([f"{path}: unknown format {fmt!r}"])
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        if isinstance(exc, InputsError):
            raise
        raise InputsError([f"{path}: cannot be read as {fmt} ({compression}): {exc}"]) from exc
    except Exception as exc:
        if type(exc).__module__.startswith("pyarrow"):
            raise InputsError([f"{path}: cannot be read as {fmt}: {exc}"]) from exc
        raise


def _jsonl_rows(path: Path, compression: str) -> Iterator[tuple[int, dict | str]]:
    with open_binary(path, compression) as handle:
        for number, value in iter_json_lines(handle):
            if isinstance(value, RecordError):
                yield number, value.message
            elif not isinstance(value, dict):
                yield number, f"expected a JSON object, got {type(value).__name__}"
            else:
                yield number, value


def _csv_rows(path: Path, compression: str) -> Iterator[tuple[int, dict | str]]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with open_binary(path, compression) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
        reader = csv.DictReader(text)
        for row in reader:
            if None in row:
                yield reader.line_num, "more fields than the header has columns"
                continue
            yield reader.line_num, {k: v for k, v in row.items() if v is not None}


# --- records → examples ---------------------------------------------------------------------
def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else str(value).strip()


def _strings(value: Any, name: str, errors: list[str], where: str) -> list[str]:
    """A list of non-empty strings (items stripped, empty ones dropped, as the reference does);
    in CSV the list comes as JSON text."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            errors.append(f'{where}: {name}: must be a list (in CSV: JSON text like ["a", "b"])')
            return []
    if value is None:
        return []
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list | tuple):
        errors.append(f"{where}: {name}: must be a list of strings, got {type(value).__name__}")
        return []
    return [s for s in (_text(x) for x in value if x is not None) if s]


def record_kind(record: dict[str, Any], kind: str) -> str:
    if kind != "auto":
        return kind
    return (
        "how2mine_export" if "final_procedure" in record and "source_example" in record else "bench"
    )


def record_example(
    record: dict[str, Any], *, kind: str, where: str, errors: list[str]
) -> BenchExample | None:
    """One record as an example, or None with the problems appended to ``errors``."""
    found: list[str] = []
    if record_kind(record, kind) == "how2mine_export":
        src, proc = record.get("source_example"), record.get("final_procedure")
        if isinstance(src, str) or isinstance(proc, str):  # CSV: nested objects as JSON text
            try:
                src = json.loads(src) if isinstance(src, str) else src
                proc = json.loads(proc) if isinstance(proc, str) else proc
            except json.JSONDecodeError:
                pass
        if not isinstance(src, dict) or not isinstance(proc, dict):
            errors.append(f"{where}: source_example/final_procedure: must both be objects")
            return None
        ident = _text(src.get("id")) or _text(record.get("id"))
        topic = _text(src.get("topic")) or _text(record.get("topic"))
        goal, prefix = _text(proc.get("goal")), "final_procedure."
        steps = _strings(proc.get("steps"), f"{prefix}steps", found, where)
        resources = _strings(proc.get("resources"), f"{prefix}resources", found, where)
        url, source_text, id_name = (
            _text(src.get("url")),
            _text(src.get("text")),
            "source_example.id",
        )
    else:
        ident = _text(record.get("source_example_id") or record.get("id"))
        topic, goal, prefix = _text(record.get("topic")), _text(record.get("goal")), ""
        steps = _strings(record.get("steps"), "steps", found, where)
        resources = _strings(record.get("resources"), "resources", found, where)
        url, source_text = _text(record.get("url")), _text(record.get("source_text"))
        id_name = "source_example_id"
    if not ident:
        found.append(f"{where}: {id_name}: is missing or empty")
    if not goal:
        found.append(f"{where}: {prefix}goal: is missing or empty")
    if not steps and not any(f"{prefix}steps" in e for e in found):
        found.append(f"{where}: {prefix}steps: is missing or empty")
    if found:
        errors.extend(found)
        return None
    return BenchExample(
        source_example_id=ident,
        topic=topic,
        goal=goal,
        steps=steps,
        resources=resources,
        url=url,
        source_text=source_text,
        where=where,
    )


def load_examples(inputs: Inputs, *, max_errors: int = MAX_ERRORS) -> list[BenchExample]:
    """Every example of the inputs, in file order; raises :class:`InputsError` (the first
    ``max_errors`` problems and a count) if any record is unusable."""
    errors: list[str] = []
    examples: list[BenchExample] = []
    first: dict[str, str] = {}
    for path in input_files(inputs):
        fmt, comp = file_kind(path, inputs.format, inputs.compression)
        for number, row in iter_rows(path, fmt, comp):
            where = f"{path}:{number}"
            if isinstance(row, str):
                errors.append(f"{where}: {row}")
                continue
            example = record_example(row, kind=inputs.kind, where=where, errors=errors)
            if example is None:
                continue
            seen = first.setdefault(example.source_example_id, where)
            if seen != where:
                errors.append(
                    f"{where}: source_example_id: {example.source_example_id!r} repeats {seen}"
                )
                continue
            examples.append(example)
    if errors:
        shown = errors[:max_errors]
        if len(errors) > max_errors:
            shown.append(f"... and {len(errors) - max_errors} more error(s)")
        raise InputsError(shown)
    if not examples:
        raise InputsError([f"inputs.path: {inputs.path}: no examples found"])
    return examples
