"""Streaming readers for uploaded mining inputs: JSONL and CSV (plain or gz/zst/bz2/xz), Parquet.

Pure Python (pyarrow for Parquet), no Django. Files are never loaded whole: JSONL and CSV are
read line by line, Parquet batch by batch with ``ParquetFile.iter_batches``. Every record comes
out as an :class:`InputRecord` carrying either its fields or an error message naming the line
(or row) and what is wrong, so one bad record never stops a file.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core.text import strip_value, stripped_note

FORMATS = ("jsonl", "csv", "parquet")
DEFAULT_MAX_RECORD_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class InputRecord:
    line: int  # 1-based line (JSONL, CSV: the line the record ends on) or row (Parquet)
    data: dict[str, Any] | None
    error: str | None = None
    note: str | None = None  # e.g. control characters stripped from the record (core.text)


def _cleaned(line: int, value: dict[str, Any], unit: str = "line") -> InputRecord:
    """The record with NUL and other control characters stripped, the line named if any were."""
    clean, removed = strip_value(value)
    return InputRecord(
        line, clean, note=stripped_note(line, removed, unit=unit) if removed else None
    )


class UnsupportedFormat(ValueError):
    pass


# JSONL and CSV may be compressed; the last suffix says how (zstd is read through pyarrow).
COMPRESSIONS = {".gz": "gz", ".zst": "zst", ".bz2": "bz2", ".xz": "xz"}


def compression_of(name: str) -> str:
    """``gz``, ``zst``, ``bz2``, ``xz`` or ``none``, from the file name's last suffix."""
    return COMPRESSIONS.get(Path(name.lower()).suffix, "none")


def detect_format(name: str) -> str:
    lower = name.lower()
    compressed = compression_of(lower) != "none"
    if compressed:
        lower = lower[: lower.rfind(".")]
    if lower.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".parquet", ".pq")):
        if compressed:
            raise UnsupportedFormat(
                f"{name}: Parquet compresses itself; upload the .parquet file as it is"
            )
        return "parquet"
    raise UnsupportedFormat(
        f"{name}: unknown file type (use .jsonl, .csv or .parquet; JSONL and CSV may end in "
        ".gz, .zst, .bz2 or .xz)"
    )


# A source is a local path or an open binary stream (e.g. ``default_storage.open(name, "rb")``,
# which a worker on another machine can read); a stream's name (or ``name=``) says how it is
# compressed.
Source = Path | str | BinaryIO


def _source_name(source: Source, name: str | None = None) -> str:
    if name:
        return name
    if isinstance(source, (str, Path)):
        return str(source)
    return str(getattr(source, "name", "") or "")


def open_decompressed(path: Source, compression: str) -> BinaryIO:
    """``path`` (a local path, or an open binary stream, which its opener closes) read through
    ``compression`` (``none``, ``gz``, ``zst``, ``bz2``, ``xz``), as a stream: nothing is read
    whole."""
    local = isinstance(path, (str, Path))
    if compression == "none":
        return open(path, "rb") if local else path  # type: ignore[return-value,arg-type]
    if compression == "gz":
        return gzip.open(path, "rb") if local else gzip.GzipFile(fileobj=path, mode="rb")  # type: ignore[return-value,arg-type]
    if compression == "bz2":
        return bz2.BZ2File(path, "rb")  # type: ignore[return-value,arg-type]
    if compression == "xz":
        return lzma.LZMAFile(path, "rb")  # type: ignore[return-value,arg-type]
    if compression == "zst":
        import pyarrow as pa

        raw = pa.OSFile(str(path), "rb") if local else pa.PythonFile(path, mode="r")
        return io.BufferedReader(pa.CompressedInputStream(raw, "zstd"))  # type: ignore[return-value,arg-type]
    raise UnsupportedFormat(f"unknown compression {compression!r} (use gz, zst, bz2 or xz)")


def _open_binary(path: Source, name: str | None = None) -> BinaryIO:
    return open_decompressed(path, compression_of(_source_name(path, name)))


def iter_jsonl(
    path: Source, *, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES, name: str | None = None
) -> Iterator[InputRecord]:
    with _open_binary(path, name) as fh:
        line_no = 0
        while True:
            raw = fh.readline(max_record_bytes + 1)
            if not raw:
                return
            line_no += 1
            if len(raw) > max_record_bytes and not raw.endswith(b"\n"):
                while True:  # skip the rest of the oversized line without holding it
                    rest = fh.readline(1024 * 1024)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield InputRecord(
                    line_no, None, f"line {line_no}: record larger than {max_record_bytes} bytes"
                )
                continue
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield InputRecord(
                    line_no, None, f"line {line_no}: invalid UTF-8 at byte {exc.start}"
                )
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                yield InputRecord(
                    line_no,
                    None,
                    f"line {line_no}: not valid JSON ({exc.msg} at column {exc.colno})",
                )
                continue
            if not isinstance(value, dict):
                yield InputRecord(
                    line_no,
                    None,
                    f"line {line_no}: expected a JSON object, got {type(value).__name__}",
                )
                continue
            yield _cleaned(line_no, value)


def _has_surrogates(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def iter_csv(path: Source, *, name: str | None = None) -> Iterator[InputRecord]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with _open_binary(path, name) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
        reader = csv.DictReader(text)
        header = reader.fieldnames
        if header and any(_has_surrogates(h) for h in header):
            yield InputRecord(1, None, "line 1: invalid UTF-8 in the header row")
            return
        for row in reader:
            line_no = reader.line_num
            if None in row:
                yield InputRecord(
                    line_no, None, f"line {line_no}: more fields than the header has columns"
                )
                continue
            bad = [k for k, v in row.items() if isinstance(v, str) and _has_surrogates(v)]
            if bad:
                yield InputRecord(
                    line_no, None, f"line {line_no}: invalid UTF-8 in column {bad[0]!r}"
                )
                continue
            yield _cleaned(line_no, {k: v for k, v in row.items() if v is not None})


def iter_parquet(
    path: Source, *, columns: Sequence[str] | None = None, batch_size: int = 512
) -> Iterator[InputRecord]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    names = pf.schema_arrow.names
    wanted = [c for c in names if columns is None or c in columns]
    row = 0
    for batch in pf.iter_batches(batch_size=batch_size, columns=wanted):
        for item in batch.to_pylist():
            row += 1
            bad = None
            for key, value in item.items():
                if isinstance(value, bytes):
                    try:
                        item[key] = value.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        bad = f"row {row}: invalid UTF-8 in column {key!r} at byte {exc.start}"
                        break
            yield InputRecord(row, None, bad) if bad else _cleaned(row, item, unit="row")


def iter_records(
    path: Source,
    fmt: str | None = None,
    *,
    columns: Sequence[str] | None = None,
    name: str | None = None,
) -> Iterator[InputRecord]:
    """Records of ``path`` (a local path or an open binary stream) in order; ``fmt`` defaults
    to what the file name (``name``, else the path's or stream's) says."""
    if isinstance(path, str):
        path = Path(path)
    fmt = fmt or detect_format(Path(_source_name(path, name)).name)
    if fmt == "jsonl":
        return iter_jsonl(path, name=name)
    if fmt == "csv":
        return iter_csv(path, name=name)
    if fmt == "parquet":
        return iter_parquet(path, columns=columns)
    raise UnsupportedFormat(f"unknown format {fmt!r} (use one of {', '.join(FORMATS)})")
