"""Reading a batch's input into its document rows, streamed in bounded chunks.

The input (an upload, a stored file, a shard directory or a glob: :mod:`.documents`) is read
record by record and written ``INGEST_CHUNK`` rows at a time — with PostgreSQL's ``COPY``
(psycopg 3), elsewhere with ``bulk_create`` — so memory stays flat whatever the corpus size.
All or nothing: one transaction (re-run safe: the batch's earlier rows are deleted first); the
lease is beaten between chunks, so a long corpus keeps the batch held.

A launched batch is read by the worker, holding the batch's lease, before its first chunk
(:func:`batch_launch_prepare`, the run type's launch preparation: :mod:`mining.apps`).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterable, Iterator

import orjson
from django.db import connection, transaction
from django.utils import timezone
from psycopg import postgres
from psycopg.adapt import Dumper
from psycopg.pq import Format

from benchmarks.llm.base import LLMBackend
from core.bulk_load import analyze_tables
from core.runs.engine import Lease, LeaseState
from mining import inputs
from mining.models import MiningBatch, MiningDocument
from mining.services.documents import iter_stored_documents
from mining.services.progress import SAVED_FIELDS
from mining.services.stage_backends import distinct_backends, stage_backends

INGEST_WAIT_S = 0.5  # a lane other than the first looks this often whether the upload is read

INGEST_CHUNK = 50_000  # rows per COPY statement (streamed, not held); a lease beat after each

# MiningDocument columns written by ingest, in COPY order
_COLUMNS = (
    "batch_id",
    "position",
    "source_id",
    "topic",
    "topic_raw",
    "url",
    "text",
    "input_goal",
    "input_steps",
    "input_resources",
    "notes",
    *SAVED_FIELDS,  # a document's progress (mining.services.progress)
    "updated_at",
)
_PENDING, _INVALID = MiningDocument.Outcome.PENDING, MiningDocument.Outcome.INVALID


def document_row(batch_id: int, doc: inputs.DocInput, now) -> tuple:
    """The row of one input document, in ``_COLUMNS`` order."""
    bad = bool(doc.problem)
    return (
        batch_id,
        doc.line,
        doc.source_id,
        doc.topic or "",
        doc.topic_raw[:255],
        doc.url,
        doc.text,
        doc.goal,
        doc.steps,
        doc.resources,
        doc.notes,
        _INVALID if bad else _PENDING,
        "input" if bad else "",
        0,
        f"input: {doc.problem}" if bad else "",
        {},
        "",
        [],
        [],
        now,
    )


# their PostgreSQL types, for a binary COPY (PostgreSQL parses no text); JSON as Python values
_COPY_TYPES = {"batch_id": "int8", "position": "int4", "last_passed_stage": "int2"}
_JSON = frozenset(("input_steps", "input_resources", "notes", "trace", "steps", "resources"))


class _JsonbCopyDumper(Dumper):
    """jsonb for a binary COPY (found by the column's type, ``set_types``): the version byte,
    then orjson's encoding."""

    format = Format.BINARY
    oid = postgres.types["jsonb"].oid

    def dump(self, obj) -> bytes:
        return b"\x01" + orjson.dumps(obj)


def _copy_types() -> list[str]:
    return [
        _COPY_TYPES.get(
            c, "jsonb" if c in _JSON else "timestamptz" if c == "updated_at" else "text"
        )
        for c in _COLUMNS
    ]


def _model_row(row: tuple) -> MiningDocument:
    return MiningDocument(**dict(zip(_COLUMNS, row, strict=True)))


def _write(rows: Iterator[tuple]) -> None:
    """Write the rows as they come (a generator: none are held beyond the driver's buffer)."""
    if connection.vendor != "postgresql":  # e.g. the embedded SQLite: bounded bulk inserts
        while part := [_model_row(r) for r in itertools.islice(rows, 2000)]:
            MiningDocument.objects.bulk_create(part)
        return
    table = connection.ops.quote_name(MiningDocument._meta.db_table)
    cols = ", ".join(connection.ops.quote_name(c) for c in _COLUMNS)
    sql = f"COPY {table} ({cols}) FROM STDIN (FORMAT BINARY)"
    with connection.cursor() as cursor:
        raw = cursor.cursor  # psycopg's own cursor, under Django's wrapper
        # the six JSON columns through orjson, for this cursor only: psycopg's default jsonb
        # dumper (the standard library's dumps) took ~60% of the COPY's time
        raw.adapters.register_dumper(None, _JsonbCopyDumper)
        with raw.copy(sql) as copy:
            copy.set_types(_copy_types())
            for row in rows:
                copy.write_row(row)


def ingest_documents(
    *,
    batch: MiningBatch,
    docs: Iterable[inputs.DocInput],
    beat: Callable[[], object] | None = None,
    chunk: int = INGEST_CHUNK,
) -> tuple[int, int]:
    """Write ``docs`` as the batch's rows, one COPY (or bulk insert) of at most ``chunk`` rows
    after another, streamed; ``(total, invalid)``."""
    counts = {"total": 0, "invalid": 0}
    now = timezone.now()
    docs = iter(docs)

    def rows() -> Iterator[tuple]:
        for doc in itertools.islice(docs, chunk):
            counts["total"] += 1
            counts["invalid"] += bool(doc.problem)
            yield document_row(batch.pk, doc, now)

    while True:
        before = counts["total"]
        _write(rows())
        if counts["total"] - before < chunk:
            return counts["total"], counts["invalid"]
        if beat is not None:
            beat()


def batch_ingest(*, batch: MiningBatch, beat: Callable[[], object] | None = None) -> int:
    """Read the batch's input into MiningDocument rows, all or nothing (re-run safe).
    ``beat`` (the execution's lease) is called after each chunk written."""
    with transaction.atomic():
        MiningDocument.objects.filter(batch=batch).delete()
        total, invalid = ingest_documents(batch=batch, docs=iter_stored_documents(batch), beat=beat)
        analyze_tables(MiningDocument)  # bulk-filled: plan the chunks' queries on its real size
        MiningBatch.objects.filter(pk=batch.pk).update(ingested=True, n_total=total, n_done=invalid)
    batch.refresh_from_db()
    return total


def batch_launch_prepare(run: MiningBatch, lease: Lease) -> None:
    """A launched batch's input read by the worker before its first chunk (the run type's
    launch preparation, called before each chunk; nothing once ``ingested``): the first lane
    reads the upload; the others wait for it (their lease beaten)."""
    if run.ingested:
        return
    if not lease.lane:
        batch_ingest(batch=run, beat=lease.beat)
        return
    _warm(run)
    while not MiningBatch.objects.filter(pk=run.pk, ingested=True).exists():
        if lease.beat() is not LeaseState.HELD:
            return
        time.sleep(INGEST_WAIT_S)


def _warm(run: MiningBatch) -> None:
    """What a worker process's first chunk would otherwise do before its first request — the
    HTTP client and its imports (~1 s on a loaded machine) — done while the first lane reads
    the upload: a second worker's first lane then starts with the first, not ~2 s after it
    (measured: tests/perf/bench_lanes_every_run_type.py --timeline)."""
    backends: dict[str, LLMBackend] = {}
    try:
        # only a head start: a failure here is met again, and reported, by the chunk
        with contextlib.suppress(Exception):
            backends = stage_backends(run)
            for backend in distinct_backends(backends):
                if isinstance(getattr(type(backend), "client", None), property):
                    _ = backend.client
    finally:
        for backend in distinct_backends(backends):
            backend.close()
