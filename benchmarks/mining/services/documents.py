"""A batch's input as documents: records read (from a local path or a stored file's stream),
the column map applied, each turned into a :class:`benchmarks.mining.inputs.DocInput`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from benchmarks.mining import inputs, readers
from benchmarks.mining.models import MiningBatch
from core.storage import open_stored


def iter_documents(
    path: readers.Source, *, fmt: str, options: dict[str, Any], name: str | None = None
) -> Iterable[inputs.DocInput]:
    """Every record of the file (a path or an open stream) as a DocInput (bad records carry
    ``problem``)."""
    for rec in readers.iter_records(path, fmt, name=name):
        if rec.error:
            yield inputs.DocInput(line=rec.line, source_id=f"line-{rec.line}", problem=rec.error)
            continue
        doc = inputs.document_from_record(
            inputs.map_columns(rec.data or {}, options.get("columns") or {}),
            line=rec.line,
            max_chars=options["max_doc_chars"],
            require_topic=options["require_topic"],
        )
        if rec.note:  # control characters stripped from the record (core.text)
            doc.notes.append(rec.note)
        yield doc


def iter_stored_documents(batch: MiningBatch) -> Iterator[inputs.DocInput]:
    """The batch's upload streamed from storage (core.storage): the worker reading it may be
    another machine than the web host that saved it."""
    name = batch.source_file.name
    with open_stored(name) as stream:
        yield from iter_documents(stream, fmt=batch.source_format, options=batch.options, name=name)
