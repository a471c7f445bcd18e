"""Runs in batch mode (a backend with ``mode = "batch"``, :mod:`benchmarks.llm.batch`): a run's
pending requests go to the provider as batch files, Celery beat polls them, and each output
file is stored once when its batch ends.

A run type takes part through a :class:`BatchAdapter` (registered with its run type,
:mod:`core.runs.registry`, by its app's ``ready()``): which
items are pending and their requests, and how a result is stored (its usual store: a failed
request counts an attempt and is sent again in a later batch while attempts are left, the run
type's retry policy). The engine's chunk (:func:`work`):

1. looks at the run's open batches (``ProviderBatch`` rows: the batch ids live beside the run,
   so a restarted worker resumes them); each that ended (completed, expired, cancelled, failed)
   has its output and error files downloaded and stored in one transaction with the row's
   ``stored_at`` (a row locked and already stored is skipped: exactly once). A request the batch
   never ran (expired, cancelled) stays pending, no attempt counted;
2. sends the pending items not in an open batch as new batch files (at most the provider's
   requests and bytes per file). The row is written *before* the provider is asked, with a
   placeholder id and a token that goes in the batch's metadata, and gets the batch id once
   the provider answered: a worker killed in between leaves a placeholder, which the next chunk
   (or the poll, once older than the lease) looks up among the provider's batches by its token
   (:meth:`OpenAIBatchBackend.find`) — adopted if the batch exists, dropped (its items pending
   again) if it never got there — so no batch is left unknown and nothing is sent twice;
3. answers :data:`core.runs.engine.WAITING` while batches are open: no chunk is chained, and
   :func:`poll` (beat, every ``BATCH_POLL_SECONDS``) enqueues the run when one of them ended.

A run that is no longer active (cancelled, failed) has its open batches cancelled at the
provider by :func:`poll`, and what they finished before is still stored (it is paid for).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from django.apps import apps
from django.db import transaction
from django.utils import timezone

from benchmarks.llm.base import LLMError, LLMRequest, LLMResult
from benchmarks.llm.batch import BatchState, NotRun, OpenAIBatchBackend, is_batch
from benchmarks.llm.registry import build_backend
from benchmarks.models import ProviderBatch
from core.runs import engine, registry
from core.runs.engine import KEEP_WORKING, Lease
from core.runs.models import Run, RunStatus, lease_seconds

logger = logging.getLogger(__name__)

# A row written before its batch is created: batch_id is PLACEHOLDER + the token sent in the
# batch's metadata under SUBMISSION_KEY (see the module's point 2).
PLACEHOLDER = "submitting:"
SUBMISSION_KEY = "h2r_submission"


class BatchAdapter(ABC):
    """What one run type tells the batch driver."""

    @abstractmethod
    def backend_config(self, run: Run) -> dict[str, Any]:
        """The run's backend config."""

    # whether storing needs the run's lease (a run type whose store checks it): then what an
    # inactive run's batches finished is stored when the run is resumed, not by the poll
    needs_lease = False

    @abstractmethod
    def pending(
        self, run: Run, *, exclude: set[int], lease: Lease | None = None
    ) -> Iterator[tuple[int, LLMRequest]]:
        """(item id, request) of each item to send now, leaving out ``exclude`` (in a batch)."""

    @abstractmethod
    def store(
        self, run: Run, results: list[tuple[int, LLMResult]], lease: Lease | None = None
    ) -> None:
        """Store results by item id (inside the caller's transaction); items no longer
        pending are left alone."""

    def after_store(self, run: Run) -> None:  # noqa: B027 - optional
        """After results were stored (e.g. link duplicates of what was judged)."""


def give_back_memory() -> None:
    """Hand the pages freed since the last call back to the system. A provider's file is up to
    200 MB of request lines or replies, many small allocations freed once it is sent or stored;
    glibc keeps such pages unless asked (``malloc_trim``), and the worker's memory would ratchet
    up from one file to the next. Elsewhere than glibc, nothing."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        trim = None
    if trim is not None:
        trim(0)


def uses_batch(config: dict[str, Any]) -> bool:
    return is_batch(config)


def _rows(run: Run):
    return ProviderBatch.objects.filter(run_label=run._meta.label, run_id=run.pk)


def _note(row: ProviderBatch, state: BatchState) -> None:
    ProviderBatch.objects.filter(pk=row.pk).update(
        status=state.status,
        n_completed=state.counts.get("completed", 0),
        n_failed=state.counts.get("failed", 0),
        updated_at=timezone.now(),
    )


def store_batch(
    *,
    run: Run,
    row: ProviderBatch,
    state: BatchState,
    backend: OpenAIBatchBackend,
    adapter,
    lease: Lease | None = None,
) -> int:
    """Store the results of one ended batch, exactly once; returns how many were stored."""
    results = backend.results(state)  # downloaded before the transaction
    with transaction.atomic():
        locked = ProviderBatch.objects.select_for_update().get(pk=row.pk)
        if locked.stored_at is not None:
            return 0
        mine = {int(key) for key in locked.item_keys}
        ready: list[tuple[int, LLMResult]] = []
        returned = 0
        for custom_id, result in results.items():
            if not custom_id.isdigit() or int(custom_id) not in mine:
                continue
            if isinstance(result, NotRun):
                returned += 1
                continue
            ready.append((int(custom_id), result))
        returned += len(mine) - len(ready) - returned  # no line at all: not run either
        if ready:
            adapter.store(run, ready, lease)
        locked.stored_at = timezone.now()
        locked.status = state.status
        locked.n_stored = len(ready)
        locked.n_returned = returned
        locked.failed_keys = [key for key, result in ready if isinstance(result, LLMError)]
        locked.save(
            update_fields=[
                "stored_at",
                "status",
                "n_stored",
                "n_returned",
                "failed_keys",
                "updated_at",
            ]
        )
    adapter.after_store(run)
    return len(ready)


def resolve_placeholder(row: ProviderBatch, backend: OpenAIBatchBackend) -> ProviderBatch | None:
    """A row whose batch creation was never written down: the provider's batch with its token,
    adopted (the row returned with the batch id), or — none there — the row deleted so that its
    items are pending again (None)."""
    token = row.batch_id.removeprefix(PLACEHOLDER)
    since = row.created_at.timestamp() - 300  # the provider's clock may differ a little
    state = backend.find(key=SUBMISSION_KEY, value=token, since=since)
    mine = ProviderBatch.objects.filter(pk=row.pk, batch_id=row.batch_id)
    if state is None:
        mine.delete()
        logger.warning(
            "batch of %s:%s never reached the provider (submission %s): its %d items are "
            "pending again",
            row.run_label,
            row.run_id,
            token,
            row.n_requests,
        )
        return None
    mine.update(batch_id=state.id, status=state.status)
    logger.warning(
        "batch %s of %s:%s was created but not written down (submission %s): adopted",
        state.id,
        row.run_label,
        row.run_id,
        token,
    )
    row.batch_id, row.status = state.id, state.status
    return row


def _collect(run: Run, backend, adapter, lease: Lease | None) -> list[ProviderBatch]:
    """Store every ended batch of the run; returns those still open."""
    still_open: list[ProviderBatch] = []
    for row in _rows(run).filter(stored_at__isnull=True).order_by("id"):
        if row.batch_id.startswith(PLACEHOLDER) and resolve_placeholder(row, backend) is None:
            continue
        state = backend.retrieve(row.batch_id)
        _note(row, state)
        if state.terminal:
            store_batch(
                run=run, row=row, state=state, backend=backend, adapter=adapter, lease=lease
            )
            give_back_memory()
        else:
            still_open.append(row)
        if lease is not None:
            lease.beat()
    return still_open


def submit_pending(
    *, run: Run, adapter: BatchAdapter, backend: OpenAIBatchBackend, lease: Lease | None = None
) -> int:
    """Send the run's pending items that no open batch carries, as batch files; one row per
    batch, written before the provider is asked and given its batch id once it answered (the
    module's point 2). Returns the requests sent."""
    in_flight: set[int] = set()
    for keys in _rows(run).filter(stored_at__isnull=True).values_list("item_keys", flat=True):
        in_flight.update(int(k) for k in keys)
    lines = (
        backend.line(str(item), request)
        for item, request in adapter.pending(run, exclude=in_flight, lease=lease)
    )
    sent = 0
    for chunk in backend.files(lines):
        if lease is not None and lease.beat() not in KEEP_WORKING:
            break
        keys = [int(_custom_id(line)) for line in chunk]
        token = uuid.uuid4().hex
        row = ProviderBatch.objects.create(
            run_label=run._meta.label,
            run_id=run.pk,
            batch_id=PLACEHOLDER + token,
            status="submitting",
            item_keys=keys,
            n_requests=len(keys),
        )
        # an error here leaves the placeholder: the next chunk finds out whether the batch
        # was created after all (resolve_placeholder)
        state = backend.submit(
            chunk, metadata={"run": f"{run._meta.label}:{run.pk}", SUBMISSION_KEY: token}
        )
        written = ProviderBatch.objects.filter(pk=row.pk, batch_id=row.batch_id).update(
            batch_id=state.id, status=state.status
        )
        if not written:  # this worker had lost its lease: the next one dropped the placeholder
            backend.cancel(state.id)
            logger.warning(
                "batch %s created after its placeholder was dropped: cancelled", state.id
            )
            break
        sent += len(keys)
        give_back_memory()  # what the file before this one held
    give_back_memory()
    return sent


def _custom_id(line: str) -> str:
    # lines are written by OpenAIBatchBackend.line: '{"custom_id":"<id>",...'
    return line.split('"custom_id":"', 1)[1].split('"', 1)[0]


def adapter_for(model: type[Run]) -> BatchAdapter | None:
    """The run type's adapter (:mod:`core.runs.registry`), None for a run type without batch
    mode."""
    return registry.run_type(model).batch_adapter


def work(*, run: Run, lease: Lease) -> bool | str:
    """One chunk of a run in batch mode (the executor's ``work_chunk``): store what ended, send
    what is pending; WAITING while batches are open, False once nothing is left."""
    adapter = adapter_for(type(run))
    backend = build_backend(adapter.backend_config(run))
    try:
        _collect(run, backend, adapter, lease)
        if lease.beat() not in KEEP_WORKING:
            return True
        submit_pending(run=run, adapter=adapter, backend=backend, lease=lease)
    finally:
        backend.close()
    if _rows(run).filter(stored_at__isnull=True).exists():
        return engine.WAITING
    return False


def poll() -> dict[str, int]:
    """Celery beat's batch poll: for every run with open batches, cancel them at the provider
    when the run is no longer active, store those that ended for a run no chunk will work, and
    enqueue an active run one of whose batches ended. Returns counts for the log."""
    counts = {"runs": 0, "ended": 0, "cancelled": 0, "enqueued": 0}
    open_runs = (
        ProviderBatch.objects.filter(stored_at__isnull=True)
        .values_list("run_label", "run_id")
        .distinct()
    )
    for label, run_id in list(open_runs):
        model = apps.get_model(label)
        run = model.objects.filter(pk=run_id).first()
        adapter = adapter_for(model)
        if run is None or adapter is None:
            continue
        counts["runs"] += 1
        active = run.status in (RunStatus.QUEUED, RunStatus.RUNNING)
        backend = build_backend(adapter.backend_config(run))
        ended = False
        try:
            for row in _rows(run).filter(stored_at__isnull=True):
                if row.batch_id.startswith(PLACEHOLDER):
                    age = timezone.now() - row.created_at
                    if age.total_seconds() < lease_seconds():
                        continue  # a worker may be creating it right now
                    if resolve_placeholder(row, backend) is None:
                        ended = True  # its items are pending again: the run sends them
                        continue
                if not active and not row.cancel_sent:
                    backend.cancel(row.batch_id)
                    ProviderBatch.objects.filter(pk=row.pk).update(cancel_sent=True)
                    counts["cancelled"] += 1
                state = backend.retrieve(row.batch_id)
                _note(row, state)
                if state.terminal:
                    ended = True
                    counts["ended"] += 1
                    if not active and not adapter.needs_lease:
                        store_batch(run=run, row=row, state=state, backend=backend, adapter=adapter)
        finally:
            backend.close()
        if ended and active:
            engine.enqueue(run)
            counts["enqueued"] += 1
    return counts


def failed_keys(run: Run) -> set[int]:
    """Items whose request failed inside one of the run's batches since it was last resumed
    (for run types that do not count attempts per item: they are not sent again until then)."""
    keys: set[int] = set()
    for row in _rows(run).exclude(failed_keys=[]).values_list("failed_keys", flat=True):
        keys.update(int(k) for k in row)
    return keys


def forget_failures(run: Run) -> None:
    """On resume: what failed inside a batch is sent again."""
    _rows(run).update(failed_keys=[])


def batches_of(run: Run) -> list[ProviderBatch]:
    """The run's provider batches, oldest first (pages, API, tests)."""
    return list(_rows(run).order_by("id"))
