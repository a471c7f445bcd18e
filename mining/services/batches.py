"""Writes for How2Mine batches: create, ingest, cancel, resume.

A batch is a run of the run engine (:mod:`core.runs.engine`): the worker reads its upload before
the first chunk (its launch preparation, :func:`mining.services.ingest.batch_launch_prepare`) and
its executor (:mod:`mining.services.execution`) works one chunk of pending documents per chunk
task; lease, status, enqueue, cancel and resume are the engine's.

Dataset promotion (dedup + stratified sampling) is in :mod:`mining.promotion`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files import File

from benchmarks.llm.preflight import preflight_error
from benchmarks.llm.registry import build_backend
from core.runs import dispatch, engine
from mining import inputs, readers
from mining.budgets import BUDGET_KEYS, clean_budget
from mining.heuristics import HeuristicsConfig
from mining.models import MiningBatch
from mining.services.documents import (  # iter_documents: re-exported (demo)
    iter_documents,  # noqa: F401
    stored_files,
)
from mining.services.execution import DEFAULT_CHUNK_SIZE, llm_errors
from mining.services.ingest import batch_ingest  # noqa: F401 - re-exported
from mining.services.stage_backends import config_identity
from mining.stages import LLM_STAGES, STAGE_NUMBERS, parse_stages

logger = logging.getLogger(__name__)

DEFAULT_OPTIONS: dict[str, Any] = {
    "min_steps": 5,
    "max_steps": 15,
    "max_doc_chars": inputs.DEFAULT_MAX_DOC_CHARS,
    "chunk_size": DEFAULT_CHUNK_SIZE,
    "require_topic": True,
    "max_tokens": None,
    "columns": {},  # column map: {"text": "body", "url": ..., "topic": ..., "id": ...}
    "candidates_per_topic": None,  # the reference's targets (mining.budgets)
    "desired_valid_per_topic": None,
}


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
    for key in BUDGET_KEYS:  # per-topic budgets (mining.budgets)
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
    server does not serve its model (:mod:`benchmarks.llm.preflight`), naming the stage
    and why (a batch whose every LLM call fails would otherwise "complete")."""
    checked: dict[str, str] = {}
    for key, config in (backends or {}).items():
        ident = config_identity(config)
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
        dispatch.require_broker()  # saved below outside a transaction: refuse before it
    if upload is not None:
        batch.source_file.save(filename, upload, save=False)
    batch.save()
    if start:
        engine.launch(batch)  # the first chunk task, once the creating transaction commits
    return batch


def batch_run(
    *, batch_id: int, on_chunk: Callable[[MiningBatch], None] | None = None
) -> MiningBatch:
    """Work a batch in this process, chunk by chunk, until it stops (``manage.py mine``; no
    worker needed). A batch another execution holds is returned still active."""
    batch = MiningBatch.objects.get(pk=batch_id)
    return engine.execute_inline(batch, on_chunk=on_chunk)


# -- cancel / resume -------------------------------------------------------------------------
def batch_cancel(*, batch: MiningBatch) -> MiningBatch:
    """Cancel a queued batch at once; a running one stops sending, stores the replies in
    flight, then stops (documents stored mid-way go on from their next stage on resume)."""
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
        return engine.resume(batch, force=force, done_too=llm_errors(batch).exists())
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from None
