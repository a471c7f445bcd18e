"""A batch's input as documents: records read (from a local path or a stored file's stream),
the column map applied, each turned into a :class:`mining.inputs.DocInput`.

A batch reads its upload, or (``source_pattern``) a stored file, a shard directory or a glob of
shards in storage (:mod:`core.storage`: the filesystem or an object store), file after file,
each streamed as it is read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import Any

from django.core.files.storage import Storage, default_storage

from core.storage import open_stored
from mining import inputs, readers
from mining.models import MiningBatch


def iter_documents(
    path: readers.Source,
    *,
    fmt: str | None,
    options: dict[str, Any],
    name: str | None = None,
    offset: int = 0,
    label: str = "",
) -> Iterable[inputs.DocInput]:
    """Every record of the file (a path or an open stream) as a DocInput (bad records carry
    ``problem``). ``offset`` is added to each line for the document's position (shards after
    the first); ``label`` (the shard's name) prefixes problems and default ids, so they name
    the file as well as the line."""
    prefix = f"{label}: " if label else ""
    for rec in readers.iter_records(path, fmt, name=name):
        if rec.error:
            yield inputs.DocInput(
                line=offset + rec.line,
                source_id=f"{label}:line-{rec.line}" if label else f"line-{rec.line}",
                problem=prefix + rec.error,
            )
            continue
        doc = inputs.document_from_record(
            inputs.map_columns(rec.data or {}, options.get("columns") or {}),
            line=rec.line,
            max_chars=options["max_doc_chars"],
            require_topic=options["require_topic"],
        )
        if label:
            doc.line = offset + rec.line
            if doc.source_id == f"line-{rec.line}":
                doc.source_id = f"{label}:{doc.source_id}"[:255]
            if doc.problem:
                doc.problem = f"{label} line {rec.line}: {doc.problem}"
        if rec.note:  # control characters stripped from the record (core.text)
            doc.notes.append(prefix + rec.note)
        yield doc


def stored_files(pattern: str, *, storage: Storage | None = None) -> list[str]:
    """The storage names ``pattern`` stands for: one stored file, every corpus file of a shard
    directory (not recursive), or the files a glob matches (``corpus/part-*.jsonl.gz``), sorted.
    Raises ``ValueError`` naming the pattern when it matches nothing or a file of unknown kind."""
    storage = storage or default_storage
    pattern = pattern.strip().strip("/") if pattern.strip() != "/" else ""
    if not pattern:
        raise ValueError("source: name a stored file, a shard directory or a glob")
    if readers.is_pattern(pattern):
        names = readers.match_names(pattern, storage.listdir)
        what = "glob"
    else:
        try:
            _dirs, files = storage.listdir(pattern)
        except (FileNotFoundError, NotADirectoryError):
            files = []
        names = [f"{pattern}/{f}" for f in sorted(files) if _corpus_file(f)]
        what = "directory"
        if not files:
            if not storage.exists(pattern):
                raise ValueError(f"source: {pattern}: no such stored file, directory or glob")
            names, what = [pattern], "file"
    if not names:
        raise ValueError(f"source: {pattern}: the {what} matched no corpus file")
    for name in names:
        try:
            readers.file_kind(PurePosixPath(name).name)
        except readers.UnsupportedFormat as exc:
            raise ValueError(f"source: {exc}") from None
    return names


def _corpus_file(name: str) -> bool:
    try:
        readers.file_kind(name)
    except readers.UnsupportedFormat:
        return False
    return True


def iter_stored_documents(batch: MiningBatch) -> Iterator[inputs.DocInput]:
    """The batch's input streamed from storage (core.storage): the worker reading it may be
    another machine than the web host that saved it. Shards are read one after the other;
    positions go on from one shard to the next."""
    if not batch.source_pattern:
        name = batch.source_file.name
        with open_stored(name) as stream:
            yield from iter_documents(
                stream, fmt=batch.source_format, options=batch.options, name=name
            )
        return
    names = stored_files(batch.source_pattern)
    offset = 0
    for name in names:
        last = 0
        with open_stored(name) as stream:
            label = name if len(names) > 1 else ""
            for doc in iter_documents(
                stream, fmt=None, options=batch.options, name=name, offset=offset, label=label
            ):
                last = max(last, doc.line)
                yield doc
        offset = max(offset, last)
