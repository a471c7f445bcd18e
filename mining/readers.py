"""Streaming readers for corpus files: JSONL and CSV (plain or gz/zst/bz2/xz), Parquet, Arrow IPC.

The one home for how a corpus file is read: the file kind from its name (:func:`file_kind`),
decompression (:func:`open_decompressed`), Parquet and Arrow rows, and shard globs over any
listing (:func:`match_names`: a Django storage's ``listdir`` or the local one). Mining batches
and the ``bench`` command's inputs (``judging.bench.inputs``) both read through it.

Pure Python (pyarrow for Parquet, Arrow and zstd: the ``arrow`` extra), no Django. Files are never loaded whole: JSONL and
CSV are read line by line, Parquet and Arrow batch by batch. Every record comes
out as an :class:`InputRecord` carrying either its fields or an error message naming the line
(or row) and what is wrong, so one bad record never stops a file.
"""

from __future__ import annotations

import bz2
import csv
import fnmatch
import gzip
import io
import json
import lzma
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import orjson

from core import extras
from core.text import strip_value, stripped_note

FORMATS = ("jsonl", "csv", "parquet", "arrow")
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


# what core.text strips, found in a raw JSON line: a line without it (and without \u escapes,
# which could decode to it) needs no stripping
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


class UnsupportedFormat(ValueError):
    pass


def _arrow(module: str):
    """``module`` of pyarrow; without the ``arrow`` extra, :class:`UnsupportedFormat` naming it
    (refused as any format this install cannot read: by the form, the dry run, the command)."""
    try:
        return extras.require(
            module, extra="arrow", feature="Reading Parquet, Arrow IPC or .zst corpus files"
        )
    except extras.ExtraMissing as exc:
        raise UnsupportedFormat(str(exc)) from exc


# JSONL and CSV may be compressed; the last suffix says how (zstd is read through pyarrow).
COMPRESSIONS = {".gz": "gz", ".zst": "zst", ".bz2": "bz2", ".xz": "xz", ".lzma": "xz"}
SUFFIX_FORMATS = {
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}
KNOWN_SUFFIXES = ".jsonl, .csv, .parquet or .arrow; JSONL and CSV may end in .gz, .zst, .bz2 or .xz"


def compression_of(name: str) -> str:
    """``gz``, ``zst``, ``bz2``, ``xz`` or ``none``, from the file name's last suffix."""
    return COMPRESSIONS.get(PurePosixPath(name.lower()).suffix, "none")


def file_kind(
    name: str, fmt: str = "auto", compression: str = "auto", *, default: str | None = None
) -> tuple[str, str]:
    """``(format, compression)`` of the file ``name``: as given, else from its suffixes
    (``default``: the format of a name with no known suffix; None refuses it). Raises
    :class:`UnsupportedFormat` naming the file."""
    suffixes = [s.lower() for s in PurePosixPath(name).suffixes]
    comp = compression if compression != "auto" else compression_of(name)
    if suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes = suffixes[:-1]
    form = fmt
    if form == "auto":
        form = SUFFIX_FORMATS.get(suffixes[-1], "") if suffixes else ""
        form = form or (default or "")
        if not form:
            raise UnsupportedFormat(f"{name}: unknown file type (use {KNOWN_SUFFIXES})")
    if form not in FORMATS:
        raise UnsupportedFormat(f"{name}: unknown format {form!r} (use {', '.join(FORMATS)})")
    if comp not in ("none", "gz", "zst", "bz2", "xz"):
        raise UnsupportedFormat(f"{name}: unknown compression {comp!r} (use gz, zst, bz2 or xz)")
    if form in ("parquet", "arrow") and comp != "none":
        label = "Parquet" if form == "parquet" else "Arrow"
        raise UnsupportedFormat(
            f"{name}: {form} files carry their own compression ({label} compresses itself); "
            f"external {comp} is not supported: use the .{form} file as it is"
        )
    return form, comp


def detect_format(name: str) -> str:
    return file_kind(name)[0]


# -- shard globs -------------------------------------------------------------------------------
GLOB_CHARS = frozenset("*?[")
Listdir = Callable[[str], tuple[list[str], list[str]]]  # dir -> (dirs, files), like Storage.listdir


def is_pattern(name: str) -> bool:
    return any(c in GLOB_CHARS for c in name)


def local_listdir(path: str) -> tuple[list[str], list[str]]:
    """``Storage.listdir`` for a local directory."""
    dirs: list[str] = []
    files: list[str] = []
    with os.scandir(path or ".") as it:
        for entry in it:
            (dirs if entry.is_dir() else files).append(entry.name)
    return dirs, files


def match_names(pattern: str, listdir: Listdir) -> list[str]:
    """The file names matching ``pattern`` (``dir/part-*.jsonl.gz``; ``*``, ``?`` and ``[...]``
    inside one path segment, a segment per directory level, as :mod:`glob` does), sorted, read
    through ``listdir`` (a Django storage's, so shards in an object store are found too)."""
    parts = pattern.replace("\\", "/").split("/")
    if any(p == "**" for p in parts):
        raise UnsupportedFormat(f"{pattern}: '**' is not supported; name each directory level")
    prefix: list[str] = []
    while parts and not is_pattern(parts[0]) and len(parts) > 1:
        prefix.append(parts.pop(0))
    found: list[str] = []

    def walk(base: str, rest: list[str]) -> None:
        try:
            dirs, files = listdir(base)
        except (FileNotFoundError, NotADirectoryError):
            return
        head, tail = rest[0], rest[1:]
        if tail:
            for d in sorted(fnmatch.filter(dirs, head)):
                walk(f"{base}/{d}" if base else d, tail)
        else:
            found.extend(f"{base}/{f}" if base else f for f in fnmatch.filter(files, head))

    if parts:
        walk("/".join(prefix), parts)
    return sorted(found)


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
        pa = _arrow("pyarrow")

        raw = pa.OSFile(str(path), "rb") if local else pa.PythonFile(path, mode="r")
        return io.BufferedReader(pa.CompressedInputStream(raw, "zstd"))  # type: ignore[return-value,arg-type]
    raise UnsupportedFormat(f"unknown compression {compression!r} (use gz, zst, bz2 or xz)")


def _open_binary(path: Source, name: str | None = None, compression: str = "") -> BinaryIO:
    return open_decompressed(path, compression or compression_of(_source_name(path, name)))


def iter_jsonl(
    path: Source,
    *,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    name: str | None = None,
    compression: str = "",
) -> Iterator[InputRecord]:
    with _open_binary(path, name, compression) as fh:
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
                value = _json_loads(raw, text)
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
            if _surely_clean(raw) or ("\\u" not in text and _CONTROL.search(text) is None):
                yield InputRecord(line_no, value)  # nothing to strip (the common case: fast)
            else:
                yield _cleaned(line_no, value)


def _surely_clean(raw: bytes) -> bool:
    """A JSON line that parsed holds no control character when it has no escape (``\\u``),
    no DEL and no UTF-8 lead byte of U+0080–U+00BF (C1 controls): JSON forbids raw C0 controls
    in strings and between tokens. Three byte searches, much cheaper than the regex."""
    return b"\\u" not in raw and b"\x7f" not in raw and b"\xc2" not in raw


def _json_loads(raw: bytes, text: str) -> Any:
    """orjson (about 4× the standard library on web documents); the standard library where
    orjson refuses (NaN, lone surrogates, bad JSON) or may read otherwise (an integer past 64
    bits comes out of orjson as a float, so a record holding a float is read again), so that
    what a line reads as and every error message stay the standard library's."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if isinstance(value, dict) and _holds_float(value):
        return json.loads(text)
    return value


_PLAIN = (str, int, bool, type(None))


def _holds_float(record: dict, depth: int = 3) -> bool:
    """Whether a float is in the record, down to ``depth`` levels (a container deeper than that
    counts as one, to be sure). Most records hold only strings: one pass over their values."""
    for value in record.values():
        kind = type(value)
        if kind in _PLAIN:
            continue
        if kind is float or depth <= 1:
            return True
        if kind is dict and _holds_float(value, depth - 1):
            return True
        if kind is list and _holds_float(dict(enumerate(value)), depth - 1):
            return True
    return False


def _has_surrogates(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def iter_csv(
    path: Source, *, name: str | None = None, compression: str = ""
) -> Iterator[InputRecord]:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with _open_binary(path, name, compression) as raw:
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
    pq = _arrow("pyarrow.parquet")
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


def iter_arrow(path: Source) -> Iterator[InputRecord]:
    """Rows of an Arrow IPC file (random-access format, else the streaming format), batch by
    batch; a local file is memory-mapped, a stream (a stored file) read as it goes."""
    pa, ipc = _arrow("pyarrow"), _arrow("pyarrow.ipc")
    local = isinstance(path, (str, Path))
    source = pa.memory_map(str(path), "r") if local else pa.PythonFile(path, mode="r")
    with source:
        try:
            reader = ipc.open_file(source)
            batches: Iterator[Any] = (reader.get_batch(i) for i in range(reader.num_record_batches))
        except pa.ArrowInvalid:
            source.seek(0)
            batches = iter(ipc.open_stream(source))
        row = 0
        for batch in batches:
            for item in batch.to_pylist():
                row += 1
                yield _cleaned(row, item, unit="row")


def iter_records(
    path: Source,
    fmt: str | None = None,
    *,
    columns: Sequence[str] | None = None,
    name: str | None = None,
    compression: str | None = None,
) -> Iterator[InputRecord]:
    """Records of ``path`` (a local path or an open binary stream) in order; ``fmt`` and
    ``compression`` default to what the file name (``name``, else the path's or stream's) says."""
    if isinstance(path, str):
        path = Path(path)
    label = _source_name(path, name)
    fmt, comp = file_kind(PurePosixPath(label).name, fmt or "auto", compression or "auto")
    if fmt == "jsonl":
        return iter_jsonl(path, name=name, compression=comp)
    if fmt == "csv":
        return iter_csv(path, name=name, compression=comp)
    if fmt == "parquet":
        return iter_parquet(path, columns=columns)
    return iter_arrow(path)
