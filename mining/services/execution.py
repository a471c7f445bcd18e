"""A mining batch's chunks for the run engine (:mod:`core.runs.engine`): the executor a worker
runs.

The upload is read on the first execution; each chunk then takes pending documents (per-topic
budgets applied), at most ``chunk_size`` open at once and more as they finish, until none is
left or the chunk's time is up (``RUN_CHUNK_SECONDS``), through the stages (:mod:`mining.flow`: a
document moves to its next stage as soon as its reply arrives) while a writer thread
(:class:`core.runs.reply_writer.ReplyWriter`) stores each document's progress as replies come
(:mod:`mining.services.progress`: its trace so far, outcome, and the request's
usage, each write whole, only while this execution holds the batch's lease). A request is sent only once fewer than the backends'
concurrency are sent and not yet stored (:class:`core.runs.reply_writer.Backpressure`), so a
worker killed at any moment re-buys at most that many requests: a document stored mid-way
resumes at its next stage, one finished is never sent again.
"""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from benchmarks.llm.base import LLMBackend
from benchmarks.llm.batch_rate import is_batch
from benchmarks.llm.registry import queue_for
from benchmarks.services import batch_runs
from core.runs import lanes
from core.runs.engine import Lease, LeaseState, RunExecutor
from core.runs.models import RunStatus
from core.runs.progress import LiveCounters
from core.runs.reply_writer import Backpressure, ReplyWriter, unstored_width
from mining.budgets import budgets_of
from mining.documents import DocState, StageUsage
from mining.heuristics import HeuristicsConfig
from mining.models import MiningBatch, MiningDocument, MiningStageUsage
from mining.pipeline import Pipeline
from mining.services import progress
from mining.services.budgets import Intake
from mining.services.progress import doc_state
from mining.services.stage_backends import distinct_backends, stage_backends

DEFAULT_CHUNK_SIZE = 128
# after the first reply, gather what else arrives within this long into one write; once the feed
# waits for a slot, only what comes within SETTLE_S (fewer, larger writes for a few ms)
GATHER_S = 0.1
SETTLE_S = 0.005
Outcome = MiningDocument.Outcome


def uses_batch(run: MiningBatch) -> bool:
    """Whether the batch's LLM stages go through a provider's Batch API (benchmarks.llm.batch)."""
    return any(is_batch(c) for c in (run.backends or {}).values())


def _work_streaming(
    run, lease, pipeline, first, refill, window, intake, width, gate=None
) -> LeaseState:
    """The chunk with a writer thread storing each reply as it comes, at most ``width`` sent and
    not yet stored (endpoint-wide with the stages' one backend's ``gate``; see the module's
    docstring); what the lease said last."""
    slots = Backpressure(width, gate)
    live = LiveCounters(run, lease)  # counted from the documents and usage rows

    def store(results: list[tuple]) -> None:
        if progress.store(run, lease, results):
            intake.stored([(key, row[0], row[1]) for key, row, _stage, _usage in results])
            live.write()

    writer = ReplyWriter(
        name=f"mining-batch-{run.pk}-writer",
        store=store,
        lease=lease,
        slots=slots,
        gather_s=GATHER_S,
        settle_s=SETTLE_S,
        replies=lambda results: sum(map(progress.is_reply, results)),
    )

    def on_update(doc: DocState, stage: str | None, usage: StageUsage | None) -> None:
        if stage is not None:
            slots.returned()
        writer.submit(progress.snapshot(doc, stage, usage))

    writer.start()
    try:
        pipeline.run(
            first,
            on_update=on_update,
            take=lambda: slots.take(writer.should_stop),
            admit=slots.free,
            should_stop=writer.should_stop,
            refill=refill,
            window=window,
        )
    finally:
        writer.close()
        slots.close()
    if writer.error is not None:
        raise writer.error
    return writer.state


def _work_in_transaction(run, lease, pipeline, first, refill, window) -> None:
    """The chunk inside a caller's transaction (a test, an ``atomic`` block): another connection
    would see none of it, so everything is stored here, once the chunk's documents are through
    (the caller's commit makes it durable, all or nothing)."""
    results: list[tuple] = []
    lock = threading.Lock()

    def on_update(doc: DocState, stage: str | None, usage: StageUsage | None) -> None:
        with lock:
            results.append(progress.snapshot(doc, stage, usage))

    pipeline.run(first, on_update=on_update, refill=refill, window=window)
    progress.store(run, lease, results)


def _pending(batch: MiningBatch) -> QuerySet[MiningDocument]:
    return MiningDocument.objects.filter(batch=batch, outcome=Outcome.PENDING)


def _mine(batch: MiningBatch, lease: Lease) -> QuerySet[MiningDocument]:
    """The pending documents of the lease's lane."""
    return lanes.in_lane(_pending(batch), lane=lease.lane, n_lanes=lease.n_lanes)


class MiningBatchExecutor(RunExecutor):
    """A mining batch for the run engine (see the module's docstring)."""

    def queue(self, run: MiningBatch) -> str | None:
        """The gpu queue when a stage runs on vLLM offline, else the default queue."""
        for config in (run.backends or {}).values():
            if queue := queue_for(config):
                return queue
        return None

    def lanes(self, run: MiningBatch) -> int:
        """:func:`core.runs.lanes.default_lanes`: lane *k* of *n* takes the pending documents
        whose id is *k* mod *n*. One lane for a batch with per-topic budgets (an execution
        counts its topics' budgets alone) or a stage on a GPU worker."""
        if self.queue(run) or budgets_of(run.options or {}).active or uses_batch(run):
            return 1
        return lanes.default_lanes()

    def work_chunk(self, run: MiningBatch, lease: Lease) -> bool | str:
        if uses_batch(run):  # the provider's Batch API, one round of stages per batch
            return batch_runs.work(run=run, lease=lease)
        backends = stage_backends(run)
        try:
            return self._work(run, lease, backends)
        finally:
            for backend in distinct_backends(backends):
                backend.close()

    @staticmethod
    def _work(run: MiningBatch, lease: Lease, backends: dict[str, LLMBackend]) -> bool:
        opts = run.options
        slots = sum(b.limits.concurrency for b in distinct_backends(backends))
        # at least twice the request slots: half open is when the chunk takes more
        window = max(int(opts.get("chunk_size") or DEFAULT_CHUNK_SIZE), 2 * slots)
        intake = Intake(  # per-topic budgets applied; a lane's documents only
            run, lambda docs: lanes.in_lane(docs, lane=lease.lane, n_lanes=lease.n_lanes)
        )
        first = [doc_state(d) for d in intake.take(window)]
        if not first:
            return False
        pipeline = Pipeline(
            stages=list(run.stages),
            backends=backends,
            heuristics=HeuristicsConfig(min_steps=opts["min_steps"], max_steps=opts["max_steps"]),
            max_tokens=opts.get("max_tokens"),
        )

        def refill(n: int) -> list[DocState]:
            return [doc_state(d) for d in intake.take(n)]

        if connection.in_atomic_block:
            _work_in_transaction(run, lease, pipeline, first, refill, window)
            return _mine(run, lease).exists()
        width = unstored_width(slots)
        # one backend for every stage: its endpoint-wide limit bounds what is unstored too
        distinct = distinct_backends(backends)
        gate = distinct[0].unstored_gate() if len(distinct) == 1 else None
        state = _work_streaming(run, lease, pipeline, first, refill, window, intake, width, gate)
        if state is not LeaseState.HELD:
            return True  # cancelling, lost or due: the engine reads the lease
        return _mine(run, lease).exists()

    def counters(self, run: MiningBatch) -> dict[str, Any]:
        docs = MiningDocument.objects.filter(batch=run).aggregate(
            n_total=Count("id"),
            n_done=Count("id", filter=~Q(outcome=Outcome.PENDING)),
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
        what an earlier stage answered is not kept for them); every other outcome is kept, and
        a document stored mid-way goes on from its next stage."""
        llm_errors(run).update(
            outcome=Outcome.PENDING,
            stage_reached="",
            last_passed_stage=0,
            drop_reason="",
            trace={},
            goal="",
            steps=[],
            resources=[],
            updated_at=timezone.now(),
        )


def llm_errors(run: MiningBatch) -> QuerySet[MiningDocument]:
    return MiningDocument.objects.filter(batch=run, outcome=Outcome.ERROR)


def _all_llm_requests_failed(run: MiningBatch) -> str:
    usage = MiningStageUsage.objects.filter(batch=run).aggregate(
        requests=Sum("requests"), failed=Sum("failed_requests")
    )
    if usage["requests"] and usage["failed"] == usage["requests"]:
        n_error = llm_errors(run).count()
        return (
            f"every LLM request failed ({usage['failed']} of {usage['requests']}; "
            f"{n_error} document(s) ended in an LLM error): check the stage backends "
            "(API key variable, URL, model), then resume"
        )
    return ""
