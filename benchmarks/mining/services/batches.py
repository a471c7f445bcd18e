"""Writes for How2Mine batches: create, ingest, the run engine's executor, cancel, resume.

A batch is a run of the run engine (:mod:`core.runs.engine`): :class:`MiningBatchExecutor` reads
the upload on the first execution and works one chunk of pending documents per chunk task;
lease, status, enqueue, cancel and resume are the engine's.

Dataset promotion (dedup + stratified sampling) is in :mod:`benchmarks.mining.promotion`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import connection, transaction
from django.db.models import Count, F, Q, QuerySet, Sum
from django.utils import timezone

from benchmarks.llm.base import LLMBackend, LLMRequest, LLMResult
from benchmarks.llm.preflight import preflight_error
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.mining import inputs, readers
from benchmarks.mining.budgets import BUDGET_KEYS, clean_budget
from benchmarks.mining.costs import cost_usd
from benchmarks.mining.heuristics import HeuristicsConfig
from benchmarks.mining.models import MiningBatch, MiningDocument, MiningStageUsage
from benchmarks.mining.pipeline import DocState, Pipeline, StageUsage
from benchmarks.mining.services.budgets import chunk_documents
from benchmarks.mining.services.documents import (  # iter_documents: re-exported (demo)
    iter_documents,  # noqa: F401
    stored_files,
)
from benchmarks.mining.services.ingest import batch_ingest  # the executor's first step
from benchmarks.mining.stages import LLM_STAGES, STAGE_NUMBERS, parse_stages
from core.runs import engine
from core.runs.engine import Lease, LeaseState, RunExecutor
from core.runs.models import RunStatus, lease_seconds

logger = logging.getLogger(__name__)

DEFAULT_OPTIONS: dict[str, Any] = {
    "min_steps": 5,
    "max_steps": 15,
    "max_doc_chars": inputs.DEFAULT_MAX_DOC_CHARS,
    "chunk_size": 128,
    "require_topic": True,
    "max_tokens": None,
    "columns": {},  # column map: {"text": "body", "url": ..., "topic": ..., "id": ...}
    "candidates_per_topic": None,  # the reference's targets (benchmarks.mining.budgets)
    "desired_valid_per_topic": None,
}
BEAT_EVERY_S = 5.0  # at most this often while replies arrive (a quarter of the lease if shorter)


# -- validation ------------------------------------------------------------------------------
def clean_options(options: dict[str, Any] | None) -> dict[str, Any]:
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
    for key in BUDGET_KEYS:  # per-topic budgets (benchmarks.mining.budgets)
        try:
            opts[key] = clean_budget(key, opts[key])
        except ValueError as exc:
            raise ValidationError({"options": str(exc)}) from None
    try:
        opts["columns"] = inputs.clean_column_map(opts["columns"])
    except ValueError as exc:
        raise ValidationError({"options": str(exc)}) from None
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


def batch_launch_check(*, backends: dict[str, dict[str, Any]]) -> None:
    """Refuse to hand a batch to the workers when a stage's API key variable is unset or its
    server does not answer ``GET /models`` (:mod:`benchmarks.llm.preflight`), naming the stage
    and why (a batch whose every LLM call fails would otherwise "complete")."""
    checked: dict[str, str] = {}
    for key, config in (backends or {}).items():
        ident = repr(sorted((k, str(v)) for k, v in config.items()))
        if ident not in checked:
            checked[ident] = preflight_error(config)
        if checked[ident]:
            raise ValidationError(
                {"backends": f"stage {STAGE_NUMBERS[key]} ({key}) cannot run: {checked[ident]}"}
            )


# -- create / ingest -------------------------------------------------------------------------
def batch_create(
    *,
    name: str,
    upload: File | None = None,
    source: str = "",
    stages: str | list[int] | None = None,
    backends: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    created_by=None,
    start: bool = True,
) -> MiningBatch:
    """A batch over an ``upload``, or over ``source``: a stored file, a shard directory or a
    glob of shards in storage (read by the worker, file after file)."""
    if (upload is None) == (not source):
        raise ValidationError({"source": "give a file to upload or a stored source, not both"})
    try:
        if source:
            names = stored_files(source)
            filename = Path(names[0]).name if len(names) == 1 else source.strip()
            fmt = readers.detect_format(Path(names[0]).name)
        else:
            filename = Path(getattr(upload, "name", "") or "upload").name
            fmt = readers.detect_format(filename)
    except (readers.UnsupportedFormat, ValueError) as exc:
        raise ValidationError({"source" if source else "source_file": str(exc)}) from None
    try:
        stage_list = parse_stages(stages)
    except ValueError as exc:
        raise ValidationError({"stages": str(exc)}) from None
    batch = MiningBatch(
        name=(name or filename)[:200],
        source_name=filename[:255],
        source_pattern=source.strip(),
        source_format=fmt,
        stages=stage_list,
        backends=_clean_backends(backends, stage_list),
        options=clean_options(options),
        created_by=created_by if getattr(created_by, "pk", None) else None,
    )
    if start:
        batch_launch_check(backends=batch.backends)
    if upload is not None:
        batch.source_file.save(filename, upload, save=False)
    batch.save()
    if start:
        engine.launch(batch)  # the first chunk task, once the creating transaction commits
    return batch


# -- run: the engine's executor ------------------------------------------------------------
class _LeaseWatch:
    """Beats the lease of one execution while replies arrive (at most every few seconds) and
    remembers what the last beat said."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.state = LeaseState.HELD
        self.every = min(BEAT_EVERY_S, lease_seconds() / 4)
        self.last = time.monotonic()

    def tick(self) -> None:
        if time.monotonic() - self.last >= self.every:
            self.state = self.lease.beat()
            self.last = time.monotonic()

    def lost(self) -> bool:
        return self.state is LeaseState.LOST


class _LeasedBackend(LLMBackend):
    """A stage's backend seen through the lease: each arriving reply may beat the heartbeat, and
    nothing new is sent once another execution holds the batch (its replies would be thrown
    away). A cancel lets the chunk in flight finish, so the work paid for is stored."""

    def __init__(self, inner: LLMBackend, watch: _LeaseWatch) -> None:
        super().__init__(inner.config)
        self.inner = inner
        self.watch = watch

    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        def stop() -> bool:
            return self.watch.lost() or (should_stop is not None and should_stop())

        for index, result in self.inner.complete_iter(requests, should_stop=stop):
            self.watch.tick()
            yield index, result

    def close(self) -> None:
        self.inner.close()


def stage_backends(batch: MiningBatch) -> dict[str, LLMBackend]:
    """One backend per selected LLM stage, built from the batch's configs."""
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
        rows.append(
            [f.get_db_prep_save(v, connection) for f, v in zip(fields, values, strict=True)]
            + [st.key]
        )
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _save_chunk(
    batch: MiningBatch, lease: Lease, states: list[DocState], usage: dict[str, StageUsage]
) -> bool:
    """Write one chunk's documents and usage in one transaction, if this execution still holds
    the batch (False otherwise: nothing written)."""
    now = timezone.now()
    with transaction.atomic():
        held = (
            MiningBatch.objects.select_for_update()
            .filter(pk=batch.pk, lease_owner=lease.token)
            .exists()
        )
        if not held:
            return False
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
        MiningBatch.objects.filter(pk=batch.pk).update(heartbeat_at=now)
    return True


def _pending(batch: MiningBatch) -> QuerySet[MiningDocument]:
    return MiningDocument.objects.filter(batch=batch, outcome=MiningDocument.Outcome.PENDING)


class MiningBatchExecutor(RunExecutor):
    """A mining batch for the run engine: the upload is read on the first execution, then each
    chunk runs ``options["chunk_size"]`` pending documents through the stages and stores them
    (documents, usage) in one transaction. Documents with an outcome are never sent again, so a
    chunk interrupted by a crash is redone by the next execution and nothing else is."""

    def queue(self, run: MiningBatch) -> str | None:
        """The gpu queue when a stage runs on vLLM offline, else the default queue."""
        for config in (run.backends or {}).values():
            if queue := queue_for(config):
                return queue
        return None

    def prepare(self, run: MiningBatch, lease: Lease) -> None:
        if not run.ingested:
            batch_ingest(batch=run, beat=lease.beat)

    def work_chunk(self, run: MiningBatch, lease: Lease) -> bool:
        opts = run.options
        size = int(opts.get("chunk_size") or DEFAULT_OPTIONS["chunk_size"])
        docs = chunk_documents(batch=run, size=size)  # per-topic budgets applied
        if not docs:
            return False
        watch = _LeaseWatch(lease)
        backends = {key: _LeasedBackend(b, watch) for key, b in stage_backends(run).items()}
        try:
            states = [_state(d) for d in docs]
            usage = Pipeline(
                stages=list(run.stages),
                backends=backends,
                heuristics=HeuristicsConfig(
                    min_steps=opts["min_steps"], max_steps=opts["max_steps"]
                ),
                max_tokens=opts.get("max_tokens"),
            ).run(states)
        finally:
            for backend in backends.values():
                backend.close()
        if watch.lost() or not _save_chunk(run, lease, states, usage):
            return True  # another execution holds the batch; the engine sees the lease lost
        return _pending(run).exists()

    def counters(self, run: MiningBatch) -> dict[str, Any]:
        docs = MiningDocument.objects.filter(batch=run).aggregate(
            n_total=Count("id"),
            n_done=Count("id", filter=~Q(outcome=MiningDocument.Outcome.PENDING)),
        )
        usage = MiningStageUsage.objects.filter(batch=run).aggregate(
            prompt_tokens=Sum("prompt_tokens"),
            completion_tokens=Sum("completion_tokens"),
            cost=Sum("cost_usd"),
        )
        return {
            "n_total": docs["n_total"],
            "n_done": docs["n_done"],
            # n_failed stays 0: documents with an LLM error are done (outcome "error")
            "prompt_tokens": usage["prompt_tokens"] or 0,
            "completion_tokens": usage["completion_tokens"] or 0,
            "cost": usage["cost"] or Decimal(0),
        }

    def outcome(self, run: MiningBatch) -> tuple[str, str]:
        """``failed`` when every LLM request of the batch failed (not "completed")."""
        reason = _all_llm_requests_failed(run)
        return (RunStatus.FAILED, reason) if reason else (RunStatus.DONE, "")

    def on_resume(self, run: MiningBatch) -> None:
        """Documents that ended in an LLM error go through the stages again (from the start:
        what an earlier stage answered is not kept for them); every other outcome is kept."""
        _llm_errors(run).update(
            outcome=MiningDocument.Outcome.PENDING,
            stage_reached="",
            last_passed_stage=0,
            drop_reason="",
            trace={},
            goal="",
            steps=[],
            resources=[],
            updated_at=timezone.now(),
        )


def _llm_errors(run: MiningBatch) -> QuerySet[MiningDocument]:
    return MiningDocument.objects.filter(batch=run, outcome=MiningDocument.Outcome.ERROR)


def _all_llm_requests_failed(run: MiningBatch) -> str:
    usage = MiningStageUsage.objects.filter(batch=run).aggregate(
        requests=Sum("requests"), failed=Sum("failed_requests")
    )
    if usage["requests"] and usage["failed"] == usage["requests"]:
        n_error = MiningDocument.objects.filter(
            batch=run, outcome=MiningDocument.Outcome.ERROR
        ).count()
        return (
            f"every LLM request failed ({usage['failed']} of {usage['requests']}; "
            f"{n_error} document(s) ended in an LLM error): check the stage backends "
            "(API key variable, URL, model), then resume"
        )
    return ""


def batch_run(
    *, batch_id: int, on_chunk: Callable[[MiningBatch], None] | None = None
) -> MiningBatch:
    """Work a batch in this process, chunk by chunk, until it stops (``manage.py mine``; no
    worker needed). A batch another execution holds is returned still active."""
    batch = MiningBatch.objects.get(pk=batch_id)
    return engine.execute_inline(batch, on_chunk=on_chunk)


# -- cancel / resume -------------------------------------------------------------------------
def batch_cancel(*, batch: MiningBatch) -> MiningBatch:
    """Cancel a queued batch at once; a running one stores the chunk in flight, then stops."""
    try:
        return engine.cancel(batch)
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from None


def batch_resume(*, batch: MiningBatch, force: bool = False) -> MiningBatch:
    """Queue a cancelled, failed or orphaned batch again (or a done one with LLM errors):
    documents that ended in an LLM error are tried again, every other outcome is kept.

    A batch whose worker still beats its heart is refused unless ``force`` (use it when you
    know the worker is gone, e.g. after killing it)."""
    batch_launch_check(backends=batch.backends)
    try:
        # a done batch too when documents ended in an LLM error: they are tried again
        return engine.resume(batch, force=force, done_too=_llm_errors(batch).exists())
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from None
