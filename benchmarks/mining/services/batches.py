"""Writes for How2Mine batches: create, ingest, run (resumable, cancellable), cancel, resume.

Dataset promotion (dedup + stratified sampling) is in :mod:`benchmarks.mining.promotion`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from benchmarks.llm.registry import build_backend
from benchmarks.mining import inputs, readers
from benchmarks.mining.costs import cost_usd
from benchmarks.mining.heuristics import HeuristicsConfig
from benchmarks.mining.models import MiningBatch, MiningDocument, MiningStageUsage
from benchmarks.mining.pipeline import DocState, Pipeline, StageUsage
from benchmarks.mining.stages import LLM_STAGES, STAGE_NUMBERS, parse_stages

logger = logging.getLogger(__name__)

DEFAULT_OPTIONS: dict[str, Any] = {
    "min_steps": 5,
    "max_steps": 15,
    "max_doc_chars": inputs.DEFAULT_MAX_DOC_CHARS,
    "chunk_size": 128,
    "require_topic": True,
    "max_tokens": None,
}
INGEST_BULK = 1000


def _stale_after() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "MINING_STALE_SECONDS", 600)))


# -- validation ------------------------------------------------------------------------------
def _clean_options(options: dict[str, Any] | None) -> dict[str, Any]:
    opts = {**DEFAULT_OPTIONS, **(options or {})}
    unknown = sorted(set(opts) - set(DEFAULT_OPTIONS))
    if unknown:
        raise ValidationError({"options": f"unknown option(s): {', '.join(unknown)}"})
    for key in ("min_steps", "max_steps", "max_doc_chars", "chunk_size"):
        try:
            opts[key] = int(opts[key])
        except (TypeError, ValueError):
            raise ValidationError(
                {"options": f"{key} must be an integer, got {opts[key]!r}"}
            ) from None
        if opts[key] < 1:
            raise ValidationError({"options": f"{key} must be >= 1, got {opts[key]}"})
    try:
        HeuristicsConfig(min_steps=opts["min_steps"], max_steps=opts["max_steps"])
    except ValueError as exc:
        raise ValidationError({"options": str(exc)}) from None
    opts["require_topic"] = bool(opts["require_topic"])
    return opts


def _clean_backends(
    backends: dict[str, Any] | None, stages: list[int]
) -> dict[str, dict[str, Any]]:
    """One backend config per selected LLM stage; ``"default"`` fills the stages not named."""
    backends = dict(backends or {})
    default = backends.pop("default", None)
    known = set(LLM_STAGES)
    unknown = sorted(set(backends) - known)
    if unknown:
        raise ValidationError(
            {
                "backends": f"unknown stage(s) {', '.join(unknown)}; use {', '.join(LLM_STAGES)} or default"
            }
        )
    out: dict[str, dict[str, Any]] = {}
    for key in LLM_STAGES:
        if STAGE_NUMBERS[key] not in stages:
            continue
        config = backends.get(key) or default
        if not isinstance(config, dict) or not config.get("model"):
            raise ValidationError(
                {
                    "backends": f"stage {STAGE_NUMBERS[key]} ({key}) needs a backend config with a 'model'"
                }
            )
        try:
            build_backend(config)
        except (ValueError, TypeError) as exc:
            raise ValidationError(
                {"backends": f"stage {STAGE_NUMBERS[key]} ({key}): {exc}"}
            ) from None
        out[key] = dict(config)
    return out


# -- create / ingest -------------------------------------------------------------------------
def batch_create(
    *,
    name: str,
    upload: File,
    stages: str | list[int] | None = None,
    backends: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    created_by=None,
    start: bool = True,
) -> MiningBatch:
    filename = Path(getattr(upload, "name", "") or "upload").name
    try:
        fmt = readers.detect_format(filename)
    except readers.UnsupportedFormat as exc:
        raise ValidationError({"source_file": str(exc)}) from None
    try:
        stage_list = parse_stages(stages)
    except ValueError as exc:
        raise ValidationError({"stages": str(exc)}) from None
    batch = MiningBatch(
        name=(name or filename)[:200],
        source_name=filename[:255],
        source_format=fmt,
        stages=stage_list,
        backends=_clean_backends(backends, stage_list),
        options=_clean_options(options),
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )
    batch.source_file.save(filename, upload, save=False)
    batch.save()
    if start:
        batch_enqueue(batch=batch)
    return batch


def batch_enqueue(*, batch: MiningBatch) -> None:
    from benchmarks.mining.tasks import mining_batch_run

    batch_id = batch.pk
    transaction.on_commit(lambda: mining_batch_run.delay(batch_id))


def _doc_from_input(batch: MiningBatch, doc: inputs.DocInput) -> MiningDocument:
    row = MiningDocument(
        batch=batch,
        position=doc.line,
        source_id=doc.source_id,
        topic=doc.topic or "",
        topic_raw=doc.topic_raw[:255],
        url=doc.url,
        text=doc.text,
        input_goal=doc.goal,
        input_steps=doc.steps,
        input_resources=doc.resources,
        notes=doc.notes,
    )
    if doc.problem:
        row.outcome = MiningDocument.Outcome.INVALID
        row.stage_reached = "input"
        row.drop_reason = f"input: {doc.problem}"
    return row


def iter_documents(path: Path, *, fmt: str, options: dict[str, Any]) -> Iterable[inputs.DocInput]:
    """Every record of the file as a DocInput (bad records carry ``problem``)."""
    for rec in readers.iter_records(path, fmt):
        if rec.error:
            yield inputs.DocInput(line=rec.line, source_id=f"line-{rec.line}", problem=rec.error)
            continue
        yield inputs.document_from_record(
            rec.data or {},
            line=rec.line,
            max_chars=options["max_doc_chars"],
            require_topic=options["require_topic"],
        )


def batch_ingest(*, batch: MiningBatch) -> int:
    """Read the uploaded file into MiningDocument rows, all or nothing (re-run safe)."""
    with transaction.atomic():
        MiningDocument.objects.filter(batch=batch).delete()
        buf: list[MiningDocument] = []
        total = invalid = 0
        path = Path(batch.source_file.path)
        for doc in iter_documents(path, fmt=batch.source_format, options=batch.options):
            row = _doc_from_input(batch, doc)
            invalid += row.outcome == MiningDocument.Outcome.INVALID
            buf.append(row)
            if len(buf) >= INGEST_BULK:
                MiningDocument.objects.bulk_create(buf)
                total += len(buf)
                buf = []
        if buf:
            MiningDocument.objects.bulk_create(buf)
            total += len(buf)
        MiningBatch.objects.filter(pk=batch.pk).update(
            ingested=True, n_documents=total, n_done=invalid, heartbeat_at=timezone.now()
        )
    batch.refresh_from_db()
    return total


# -- run -------------------------------------------------------------------------------------
def _claim(batch_id: int, runner: str) -> bool:
    """Take the batch if nobody holds it, we already do, or its holder stopped beating."""
    now = timezone.now()
    free = (
        Q(runner="")
        | Q(runner=runner)
        | Q(heartbeat_at__isnull=True)
        | Q(heartbeat_at__lt=now - _stale_after())
    )
    claimable = MiningBatch.objects.filter(
        pk=batch_id, status__in=MiningBatch.ACTIVE, cancel_requested=False
    )
    return bool(
        claimable.filter(free).update(
            runner=runner, heartbeat_at=now, status=MiningBatch.Status.RUNNING
        )
    )


def _backends_for(batch: MiningBatch) -> dict[str, Any]:
    return {key: build_backend(config) for key, config in (batch.backends or {}).items()}


def _state(doc: MiningDocument) -> DocState:
    return DocState(
        key=doc.pk,
        text=doc.text,
        goal=doc.input_goal,
        steps=list(doc.input_steps or []),
        resources=list(doc.input_resources or []),
    )


_SAVED_FIELDS = (
    "outcome",
    "stage_reached",
    "last_passed_stage",
    "drop_reason",
    "trace",
    "goal",
    "steps",
    "resources",
    "updated_at",
)


def _update_documents(states: list[DocState], now) -> None:
    """One parameterised UPDATE per document, sent with executemany (psycopg pipelines it);
    much cheaper than bulk_update's CASE expressions for 9 fields with JSON values."""
    fields = [MiningDocument._meta.get_field(name) for name in _SAVED_FIELDS]
    table = connection.ops.quote_name(MiningDocument._meta.db_table)
    sets = ", ".join(f"{connection.ops.quote_name(f.column)} = %s" for f in fields)
    sql = f"UPDATE {table} SET {sets} WHERE {connection.ops.quote_name('id')} = %s"
    rows = []
    for st in states:
        values = (
            st.outcome,
            st.stage_reached,
            st.last_passed_stage,
            st.reason,
            st.trace,
            st.goal,
            st.steps,
            st.resources,
            now,
        )
        rows.append([f.get_db_prep_save(v, connection) for f, v in zip(fields, values)] + [st.key])
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _save_chunk(
    batch: MiningBatch, runner: str, states: list[DocState], usage: dict[str, StageUsage]
) -> int:
    """Write one chunk's results, its usage and progress in one transaction. Returns docs written."""
    now = timezone.now()
    with transaction.atomic():
        held = MiningBatch.objects.select_for_update().filter(pk=batch.pk, runner=runner).first()
        if held is None:
            return -1  # another runner took the batch over: write nothing
        by_id = {s.key: s for s in states}
        pending = set(
            MiningDocument.objects.select_for_update()
            .filter(pk__in=list(by_id), outcome=MiningDocument.Outcome.PENDING)
            .values_list("pk", flat=True)
        )
        _update_documents([by_id[pk] for pk in sorted(pending)], now)
        for stage, u in usage.items():
            if not u.requests:
                continue
            row, _ = MiningStageUsage.objects.get_or_create(batch_id=batch.pk, stage=stage)
            MiningStageUsage.objects.filter(pk=row.pk).update(
                requests=F("requests") + u.requests,
                failed_requests=F("failed_requests") + u.failed_requests,
                prompt_tokens=F("prompt_tokens") + u.prompt_tokens,
                completion_tokens=F("completion_tokens") + u.completion_tokens,
                cost_usd=F("cost_usd")
                + cost_usd(batch.backends.get(stage), u.prompt_tokens, u.completion_tokens),
            )
        MiningBatch.objects.filter(pk=batch.pk).update(
            n_done=F("n_done") + len(pending), heartbeat_at=now
        )
    return len(pending)


def batch_run(
    *,
    batch_id: int,
    runner: str | None = None,
    backends: dict[str, Any] | None = None,
    on_chunk: Callable[[list[DocState]], None] | None = None,
) -> MiningBatch | None:
    """Run (or resume) a batch to the end, chunk by chunk. Idempotent: documents already done are
    never sent again; a chunk interrupted by a crash is redone by the next run. Returns None when
    another runner holds the batch."""
    runner = runner or uuid.uuid4().hex
    if not _claim(batch_id, runner):
        logger.info("mining batch %s is held by another runner or not active", batch_id)
        return None
    batch = MiningBatch.objects.get(pk=batch_id)
    try:
        if batch.started_at is None:
            MiningBatch.objects.filter(pk=batch.pk).update(started_at=timezone.now())
        if not batch.ingested:
            batch_ingest(batch=batch)
        opts = batch.options
        pipeline = Pipeline(
            stages=list(batch.stages),
            backends=backends if backends is not None else _backends_for(batch),
            heuristics=HeuristicsConfig(min_steps=opts["min_steps"], max_steps=opts["max_steps"]),
            max_tokens=opts.get("max_tokens"),
        )
        chunk_size = int(opts.get("chunk_size") or 128)
        last_pk = 0
        while True:
            if MiningBatch.objects.filter(pk=batch.pk, cancel_requested=True).exists():
                MiningBatch.objects.filter(pk=batch.pk, runner=runner).update(
                    status=MiningBatch.Status.CANCELLED, finished_at=timezone.now(), runner=""
                )
                break
            docs = list(
                MiningDocument.objects.filter(
                    batch=batch, outcome=MiningDocument.Outcome.PENDING, pk__gt=last_pk
                )
                .order_by("pk")
                .only("pk", "text", "input_goal", "input_steps", "input_resources")[:chunk_size]
            )
            if not docs:
                MiningBatch.objects.filter(pk=batch.pk, runner=runner).update(
                    status=MiningBatch.Status.COMPLETED, finished_at=timezone.now(), runner=""
                )
                break
            last_pk = docs[-1].pk
            states = [_state(d) for d in docs]
            usage = pipeline.run(states)
            if _save_chunk(batch, runner, states, usage) < 0:
                return None
            if on_chunk:
                on_chunk(states)
    except Exception as exc:
        logger.exception("mining batch %s failed", batch_id)
        MiningBatch.objects.filter(pk=batch_id, runner=runner).update(
            status=MiningBatch.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:5000],
            finished_at=timezone.now(),
            runner="",
        )
        raise
    batch.refresh_from_db()
    return batch


# -- cancel / resume -------------------------------------------------------------------------
def _runner_alive(batch: MiningBatch, now) -> bool:
    return bool(
        batch.status == MiningBatch.Status.RUNNING
        and batch.runner
        and batch.heartbeat_at
        and batch.heartbeat_at >= now - _stale_after()
    )


def batch_cancel(*, batch: MiningBatch) -> MiningBatch:
    """Ask the runner to stop after its current chunk; with no live runner, cancel at once."""
    batch.refresh_from_db()
    if batch.status not in MiningBatch.ACTIVE:
        raise ValidationError(
            f"batch {batch.pk} is {batch.status}; only pending or running batches can be cancelled"
        )
    now = timezone.now()
    updates: dict[str, Any] = {"cancel_requested": True}
    if not _runner_alive(batch, now):
        updates.update(status=MiningBatch.Status.CANCELLED, finished_at=now, runner="")
    MiningBatch.objects.filter(pk=batch.pk).update(**updates)
    batch.refresh_from_db()
    return batch


def batch_resume(*, batch: MiningBatch, force: bool = False) -> MiningBatch:
    """Start a cancelled, failed or stalled batch again; done documents are kept.

    A running batch whose runner still beats its heart is refused unless ``force`` (use it when
    you know the worker is gone, e.g. after killing it)."""
    batch.refresh_from_db()
    now = timezone.now()
    if batch.status == MiningBatch.Status.COMPLETED:
        raise ValidationError(f"batch {batch.pk} is completed; nothing to resume")
    if not force and _runner_alive(batch, now):
        raise ValidationError(
            f"batch {batch.pk} is running (last progress {batch.heartbeat_at:%H:%M:%S}); "
            "use force to take it over"
        )
    MiningBatch.objects.filter(pk=batch.pk).update(
        status=MiningBatch.Status.PENDING,
        cancel_requested=False,
        runner="",
        heartbeat_at=None,
        error="",
        finished_at=None,
    )
    batch.refresh_from_db()
    batch_enqueue(batch=batch)
    return batch


# -- dry run (no database writes, no LLM calls) ----------------------------------------------
def dry_run_file(
    *, path: Path, stages: str | list[int] | None = None, options: dict[str, Any] | None = None
) -> Iterable[dict[str, Any]]:
    """Validate every record and run what needs no LLM (the heuristics filter on records that
    already carry goal/steps); say for the rest which stage would be sent next and roughly how
    many prompt tokens it would take (o200k)."""
    from benchmarks.mining.stages import STAGES, render_prompt
    from benchmarks.tokens import count_tokens

    stage_list = parse_stages(stages)
    opts = _clean_options(options)
    fmt = readers.detect_format(path.name)
    heur = HeuristicsConfig(min_steps=opts["min_steps"], max_steps=opts["max_steps"])
    for doc in iter_documents(path, fmt=fmt, options=opts):
        out: dict[str, Any] = {
            "position": doc.line,
            "id": doc.source_id,
            "topic": doc.topic or doc.topic_raw,
            "notes": doc.notes,
        }
        if doc.problem:
            yield {**out, "outcome": "invalid", "stage": "input", "reason": f"input: {doc.problem}"}
            continue
        state = DocState(
            key=doc.line, text=doc.text, goal=doc.goal, steps=doc.steps, resources=doc.resources
        )
        leading: list[int] = []
        for number, key, _label, prompt in STAGES:
            if number not in stage_list or (number == 1 and doc.has_procedure):
                continue
            if prompt:
                break
            leading.append(number)
        if 1 not in stage_list and not doc.has_procedure:
            leading = [s for s in leading if s != 2]
        Pipeline(stages=leading, backends={}, heuristics=heur).run([state]) if leading else None
        if leading and state.outcome != "kept":
            yield {
                **out,
                "outcome": state.outcome,
                "stage": state.stage_reached,
                "reason": state.reason,
            }
            continue
        if 1 not in stage_list and not doc.has_procedure:
            yield {
                **out,
                "outcome": "invalid",
                "stage": "input",
                "reason": "input: stage 1 (extraction) is not selected and the record has no goal/steps",
            }
            continue
        nxt = next(
            (
                key
                for number, key, _l, prompt in STAGES
                if number in stage_list and prompt and not (number == 1 and doc.has_procedure)
            ),
            None,
        )
        if nxt is None:
            yield {**out, "outcome": "kept", "stage": state.stage_reached, "reason": ""}
            continue
        prompt_tokens = count_tokens(
            render_prompt(
                nxt, document=doc.text, goal=doc.goal, steps=doc.steps, resources=doc.resources
            )
        )
        yield {
            **out,
            "outcome": "would_send",
            "stage": nxt,
            "reason": "",
            "prompt_tokens": prompt_tokens,
        }
