"""The work of a generation run, one chunk at a time, for the run engine (:mod:`core.runs`).

:class:`GenerationRunExecutor` (registered for ``GenerationRun`` in :mod:`benchmarks.apps`) reads
the procedures of the selection after the run's ``cursor`` that have no generation by the run's
generator, ``chunk_size`` at a time as the requests go out, sends their H.2 requests
(:mod:`benchmarks.services.generation_requests`) concurrently, parses,
scores and stores the replies in batches as they arrive (:data:`FLUSH_EVERY`,
:data:`FLUSH_INTERVAL_S`), renewing the lease at most every :data:`BEAT_EVERY_S`; it keeps
walking the run (its lane) page after page until none is left, the chunk's time is up
(``RUN_CHUNK_SECONDS``), the run is cancelled or the lease is lost.
``cursor`` advances over the answered prefix, so the procedures up to it without a generation
are this attempt's failures (``n_failed``).

A first page refused entirely with 401/403/404 (bad key, model or URL) fails the run with that
reason; a backend that cannot be built fails it naming the backend; a backend that crashes fails
it (the engine records the exception) keeping every reply stored before the crash.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from benchmarks import scorers as sc
from benchmarks.llm.base import (
    LLMBackend,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMResult,
    takes_admit,
)
from benchmarks.llm.batch import is_batch
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.models import Generation, GenerationRun, Procedure
from benchmarks.services import batch_runs
from benchmarks.services.generation_protocols import Converter, protocol_summary
from benchmarks.services.generation_requests import (
    generation_build,
    generation_request,
    generation_run_backend_config,
)
from benchmarks.services.generation_runs import generation_run_counts, generation_run_selection
from benchmarks.services.scores import generation_scores_summary
from core.runs import lanes
from core.runs.engine import Lease, LeaseState, RunExecutor
from core.runs.models import RunStatus
from core.runs.progress import LiveCounters
from core.runs.reply_writer import Backpressure, unstored_width

FATAL_STATUSES = {401, 403, 404}  # a whole chunk refused with these fails the run
# each reply is stored as it arrives (one small transaction): a killed worker re-buys only the
# requests in flight, never replies it already had
# A batch is stored once it holds FLUSH_EVERY replies, FLUSH_INTERVAL_S after the last write,
# or at once when nothing else is in flight or the feed waits for a slot (its next request
# waits on this write). One transaction per reply kept the chunk's thread waiting on PostgreSQL
# ~70% of a CPU-bound run (three commits and a lease beat per reply).
FLUSH_EVERY = 32
FLUSH_INTERVAL_S = 0.05
BEAT_EVERY_S = 1.0  # the lease's beat (renewal; cancel, chunk time) at most this often


# --- the run's backend, one per process and config ----------------------------------------
_BACKENDS: dict[str, LLMBackend] = {}  # per process: connections, rate limits, vLLM engines
_BACKENDS_MAX = 8


def _backend_for(run: GenerationRun) -> LLMBackend:
    config = generation_run_backend_config(run=run)
    key = json.dumps(config, sort_keys=True, default=str)
    backend = _BACKENDS.get(key)
    if backend is None:
        backend = build_backend(config)
        if len(_BACKENDS) >= _BACKENDS_MAX:
            _BACKENDS.pop(next(iter(_BACKENDS))).close()
        _BACKENDS[key] = backend
    return backend


# --- storing ----------------------------------------------------------------------------------
@dataclass
class _Reply:
    procedure: Procedure
    generation: Generation | None
    error: str = ""


def _store(*, run: GenerationRun, lease: Lease, replies: list[_Reply], cursor: int | None) -> None:
    """One batch in one transaction: new generations (never a second one for a procedure: the
    unique (procedure, generator) constraint) and, while this execution holds the run (its
    lane), the cursor and the recent failures. The run row is locked only for a batch with
    failures (they are appended to its ``errors``): the lanes of a run worked by several workers
    do not queue behind one row for every batch. The run's counters (tokens and cost too) are
    counted from the rows afterwards (:class:`LiveCounters`)."""
    failed = [
        {
            "source_example_id": r.procedure.source_example_id,
            "procedure_id": r.procedure.pk,
            "error": r.error,
        }
        for r in sorted(replies, key=lambda r: r.procedure.pk)
        if r.generation is None
    ]
    with transaction.atomic():
        # linked to this run (Generation.run): its tokens and cost are counted from them
        Generation.objects.bulk_create(
            [r.generation for r in replies if r.generation is not None], ignore_conflicts=True
        )
        if lease.lane is not None:  # a lane keeps its own cursor; the run row the failures
            holds = cursor is None or lanes.advance(
                GenerationRun, run.pk, lease.lane, lease.token, cursor
            )
        else:
            moved = {"cursor": cursor} if cursor is not None else {}
            holds = bool(lease.held().update(updated_at=timezone.now(), **moved))
        if holds and failed:
            locked = lease.held().select_for_update().only("errors").first()
            if locked is not None:
                errors = (list(locked.errors) + failed)[-GenerationRun.MAX_ERRORS_KEPT :]
                GenerationRun.objects.filter(pk=run.pk).update(errors=errors)
    if cursor is not None:
        run.cursor = cursor


class _Chunk:
    """One chunk's walk of the run (or of its lane) and its replies on their way to the
    database. It reads the procedures ``chunk_size`` at a time (:attr:`pages`: the next page
    after a procedure id) as the feed needs them and keeps walking until none is left, the
    chunk's time is up (the lease's beat says ``DUE``), the run is cancelled or the lease
    lost — so a worker's request loop does not drain every ``chunk_size`` procedures and wait
    for the next chunk task. Procedures are forgotten once their reply is stored and the cursor
    passed them."""

    def __init__(
        self,
        *,
        run: GenerationRun,
        lease: Lease,
        pages: Callable[[int], list[Procedure]],
        backend: LLMBackend,
    ) -> None:
        self.run, self.lease, self.pages = run, lease, pages
        # at most ``unstored_width`` sent and not yet stored, across every lane and worker
        self.slots = Backpressure(unstored_width(run.concurrency), backend.unstored_gate())
        self.scorers = sc.get_scorers(run.scorers or None)
        self.procedures: dict[int, Procedure] = {}  # by request index, until stored and passed
        self.answered: set[int] = set()
        self.frontier = 0  # every request before it has a stored reply
        self.first_page = 0  # how many procedures the first page held
        self.buffer: list[_Reply] = []
        self.last_flush = self.last_beat = time.monotonic()
        self.n_sent = 0  # requests handed to the backend
        self.n_replies = 0
        self.refusals: list[LLMError] = []
        self.stopped = False
        self.live = LiveCounters(run, lease)  # the run's counters, counted from its rows
        # the protocol's conversion step (ProcBench free text), built on first use
        self.converter = Converter(run, generation_run_backend_config(run=run))

    def should_stop(self) -> bool:
        return self.stopped

    def _walk(self) -> Iterator[Procedure]:
        """The procedures to ask, a page at a time, until none is left, the chunk's time is up
        or it stops (:meth:`add` stops it once the first page is refused entirely)."""
        after = 0
        while not self.stopped:
            if after and self.lease.due and time.monotonic() >= self.lease.due:
                return  # the chunk's time is up: the next chunk goes on from here
            page = self.pages(after)
            if not page:
                return
            self.first_page = self.first_page or len(page)
            yield from page
            after = page[-1].pk

    def requests(self) -> Iterator[LLMRequest]:
        try:
            for procedure in self._walk():
                if not self.slots.take(self.should_stop):
                    return
                self.procedures[self.n_sent] = procedure
                self.n_sent += 1
                yield generation_request(run=self.run, procedure=procedure)
        finally:
            self.slots.done_sending()  # the slots of replies still to store go back as stored

    def add(self, index: int, result: LLMResult) -> None:
        procedure = self.procedures[index]
        if isinstance(result, LLMResponse):
            try:
                generation = generation_build(
                    run=self.run,
                    procedure=procedure,
                    response=result,
                    scorers=self.scorers,
                    converter=self.converter,
                )
                reply = _Reply(procedure, generation)
            except LLMError as exc:  # the conversion step failed for good: asked again later
                reply = _Reply(procedure, None, error=f"conversion: {exc}"[:500])
        else:
            if isinstance(result, LLMError) and result.status in FATAL_STATUSES:
                self.refusals.append(result)
            message = (
                str(result)
                if isinstance(result, LLMError)
                else f"unexpected result {type(result).__name__}"
            )
            reply = _Reply(procedure, None, error=message[:500])
        self.answered.add(index)
        self.n_replies += 1
        if self.refused_entirely:  # bad key, model or URL: send nothing more
            self.stopped = True
        self.slots.returned()
        self.buffer.append(reply)
        if (
            len(self.buffer) >= FLUSH_EVERY
            or time.monotonic() - self.last_flush >= FLUSH_INTERVAL_S
            or self.n_replies >= self.n_sent  # nothing else in flight: no later reply to wait for
            or self.slots.waiting  # the feed's next request waits on this write
        ):
            self.flush()

    def flush(self) -> None:
        """Store the buffered replies, advance the cursor over the answered prefix, renew the
        lease (stop sending when the run is being cancelled, the lease is lost or the chunk's
        time is up)."""
        cursor = None
        while self.frontier in self.answered:
            self.answered.discard(self.frontier)
            cursor = self.procedures.pop(self.frontier).pk
            self.frontier += 1
        if self.buffer or cursor is not None:
            _store(run=self.run, lease=self.lease, replies=self.buffer, cursor=cursor)
            self.slots.stored(len(self.buffer))
            self.live.write()
        self.buffer = []
        self.last_flush = now = time.monotonic()
        if now - self.last_beat >= BEAT_EVERY_S:
            self.last_beat = now
            self.stopped = self.lease.beat() is not LeaseState.HELD

    @property
    def refused_entirely(self) -> bool:
        """Every reply so far refused with 401/403/404, and at least the first page's."""
        return (
            bool(self.refusals)
            and len(self.refusals) == self.n_replies
            and self.n_replies >= self.first_page
        )


# --- the executor ------------------------------------------------------------------------------
class GenerationRunExecutor(RunExecutor):
    def queue(self, run: GenerationRun) -> str | None:
        try:
            return queue_for(generation_run_backend_config(run=run))
        except ValueError:  # an unknown backend: the chunk fails the run naming it
            return None

    def lanes(self, run: GenerationRun) -> int:
        """:func:`core.runs.lanes.default_lanes`: lane *k* of *n* generates the procedures whose
        id is *k* mod *n*, walking them with its own cursor; 1 for a backend held by a GPU
        worker (one engine, one task at a time)."""
        if is_batch(generation_run_backend_config(run=run)):
            return 1  # a provider's batch: one execution submits and stores
        return 1 if self.queue(run) else lanes.default_lanes()

    def work_chunk(self, run: GenerationRun, lease: Lease) -> bool | str:
        run.error = ""  # set below when this chunk stops the run; outcome() reports it
        if is_batch(generation_run_backend_config(run=run)):  # the provider's Batch API
            return batch_runs.work(run=run, lease=lease)
        unvisited = self._unvisited(run, lease).defer("source_text").order_by("pk")
        if not unvisited.exists():
            return False
        try:
            backend = _backend_for(run)
        except (ValueError, LLMError) as exc:  # bad config: nothing can succeed
            run.error = f"backend: {exc}"
            lease.held().update(error=run.error)  # the outcome of a run's last lane reads it
            return False

        def pages(after: int) -> list[Procedure]:
            return list(unvisited.filter(pk__gt=after)[: run.chunk_size])

        chunk = _Chunk(run=run, lease=lease, pages=pages, backend=backend)
        # a backend that takes ``admit`` keeps yielding replies while a request waits for a slot
        hold = {"admit": chunk.slots} if takes_admit(backend) else {}
        try:
            for index, result in backend.complete_iter(
                chunk.requests(), should_stop=chunk.should_stop, **hold
            ):
                chunk.add(index, result)
        finally:
            try:
                chunk.flush()  # what finished is kept, even when the backend crashed
            finally:
                chunk.slots.close()
                chunk.converter.close()
        if chunk.refused_entirely:  # bad key, model or URL: every request will be refused
            run.error = f"the backend refused every request of a chunk: {chunk.refusals[0]}"
            lease.held().update(error=run.error)
            return False
        if chunk.stopped:
            return True  # cancelling, lost or due: the engine ends, leaves or chains the run
        return self._unvisited(run, lease).exists()

    def counters(self, run: GenerationRun) -> dict[str, Any]:
        cursor = GenerationRun.objects.filter(pk=run.pk).values_list("cursor", flat=True).first()
        counts = generation_run_counts(run=run, cursor=cursor or 0)
        walked = lanes.visited(run)  # worked in lanes: each lane's failures up to its cursor
        if walked is not None:
            missing = generation_run_selection(run=run).exclude(
                generations__generator_id=run.generator_id
            )
            counts["n_failed"] = lanes.annotate_lane(missing, run).filter(walked).count()
        return counts

    def outcome(self, run: GenerationRun) -> tuple[str, str]:
        """The run's end (its last lane's): the scorer summary over the selection's
        generations, then done, or failed naming what is missing."""
        if run.error:  # set by work_chunk when it stopped the run
            return RunStatus.FAILED, run.error
        self._summarize(run)
        counts = self.counters(run)
        missing = counts["n_total"] - counts["n_done"]
        if missing > 0:
            return (
                RunStatus.FAILED,
                f"{missing} procedure(s) have no generation ({counts['n_failed']} request(s) "
                "failed); resume to retry",
            )
        return RunStatus.DONE, ""

    def on_resume(self, run: GenerationRun) -> None:
        """A new attempt walks the selection from the start: what failed is asked again."""
        batch_runs.forget_failures(run)
        GenerationRun.objects.filter(pk=run.pk).update(
            cursor=0, errors=[], **generation_run_counts(run=run, cursor=0)
        )

    @staticmethod
    def _unvisited(run: GenerationRun, lease: Lease):
        """The procedures of the lease's lane after its cursor without a generation."""
        selection = generation_run_selection(run=run)
        position = run.cursor
        if lease.lane is not None:
            selection = lanes.in_lane(selection, lane=lease.lane, n_lanes=lease.n_lanes)
            position = lanes.cursor(GenerationRun, run.pk, lease.lane)
        return selection.filter(pk__gt=position).exclude(generations__generator_id=run.generator_id)

    @staticmethod
    def _summarize(run: GenerationRun) -> None:
        """The end of the selection: the scorer summary over its generations (under a paper's
        protocol: its answers and finish reasons; the pack's metrics are a scoring run's)."""
        if run.protocol and run.protocol != "how2everything":
            summary = protocol_summary(run=run, procedures=generation_run_selection(run=run))
            GenerationRun.objects.filter(pk=run.pk).update(scores=summary)
            return
        summary = generation_scores_summary(
            generator=run.generator,
            procedures=generation_run_selection(run=run),
            scorer_names=run.scorers or None,
        )
        GenerationRun.objects.filter(pk=run.pk).update(scores=summary)
