"""The work of a judge run, one chunk at a time, for the run engine (:mod:`core.runs.engine`).

One chunk judges up to :data:`CHUNK_ITEMS` pending items: one thread feeds the judge's backend
(at most ``concurrency`` requests sent and not yet stored,
:class:`core.runs.reply_writer.Backpressure`, so a killed
worker re-buys at most that many) while a writer thread stores the replies as they
arrive (each write takes what came in meanwhile, up to :data:`FLUSH_EVERY`: judgments and item
links in one transaction, then the run's live counters counted from its items,
:class:`core.runs.progress.LiveCounters`), then beats the run's lease; the feed
stops as soon as the run is being cancelled or the lease is lost. A reply that fails to parse
is asked again in up to ``PARSE_RETRIES`` more passes of the same chunk (the parse profile's
rules, :mod:`judging.parsing`). Content this judge already judged is linked, never asked
again — except a parse failure made before the run, which is asked again. What is pending,
linked, stored and counted is :mod:`judging.services.run_items` (shared with the batch mode).

A run is worked in ``settings.JUDGE_RUN_LANES`` lanes (:mod:`core.runs.lanes`), by content hash
(:func:`judging.services.run_items.lane_items`), so several workers work one run at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Max

from benchmarks.llm.base import LLMRequest, takes_admit
from benchmarks.llm.batch import is_batch
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.services import batch_runs
from core.runs.engine import Lease, LeaseState, RunExecutor
from core.runs.lanes import MAX_LANES
from core.runs.models import RunStatus
from core.runs.progress import LiveCounters
from core.runs.reply_writer import (
    FLUSH_EVERY,  # noqa: F401 - part of this module's interface (benchmarks read it here)
    SETTLE_S,
    Backpressure,
    ReplyWriter,
    unstored_width,
)
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.parsing import PARSE_RETRIES
from judging.services import sampling
from judging.services.items import ItemInput, judge_request
from judging.services.run_items import (
    MAX_ITEM_ATTEMPTS,
    ChunkProgress,
    judgments_store,
    lane_items,
    link_known,
    pending_inputs,
    pending_items,
    run_counters,
)

CHUNK_ITEMS = int(
    os.environ.get("H2R_JUDGE_CHUNK_ITEMS", "20000")
)  # items per chunk task (~1 min at 320/s)


def _inputs_then_adopted(run: JudgeRun, lease: Lease, template: str) -> Iterator[ItemInput]:
    """The chunk's pending items, then — once they are all sent — those of each lane it can
    adopt (:meth:`core.runs.engine.Lease.adopt`: a free lane of the same run), so one worker
    goes from lane to lane with its requests still in flight instead of draining them."""
    yield from pending_inputs(run, limit=CHUNK_ITEMS, template=template, only=lane_items(lease))
    while (lane := lease.adopt()) is not None:
        link_known(run, only=lane_items(lease, [lane]))
        yield from pending_inputs(
            run, limit=CHUNK_ITEMS, template=template, only=lane_items(lease, [lane])
        )


def _request_maker(judge: Judge):
    """Input -> the judge's request for its prompt: everything but the prompt (decoding, the
    bounded JSON schema) is built once, for the judge, not once per item."""
    shape = judge_request(judge=judge, prompt="")
    if shape.messages is not None:
        return lambda inp: replace(shape, messages=[{"role": "user", "content": inp.prompt}])
    return lambda inp: replace(shape, prompt=inp.prompt)


class JudgeRunExecutor(RunExecutor):
    """Judge runs for the engine: link what is known, judge a chunk, count from the items."""

    def queue(self, run: JudgeRun) -> str | None:
        return queue_for(run.judge.backend_config())

    def lanes(self, run: JudgeRun) -> int:
        """``settings.JUDGE_RUN_LANES`` (env ``H2R_JUDGE_LANES``, default 4), read when the run
        is launched or resumed; 1 on the embedded SQLite default (one machine, whose writes
        SQLite serializes anyway)."""
        if connection.vendor == "sqlite" or is_batch(run.judge.backend_config()):
            return 1  # a provider's batch: one execution submits and stores
        return max(1, min(MAX_LANES, settings.JUDGE_RUN_LANES))

    def prepare(self, run: JudgeRun, lease: Lease) -> None:
        link_known(run, only=lane_items(lease))

    def work_chunk(self, run: JudgeRun, lease: Lease) -> bool | str:
        """Judge up to :data:`CHUNK_ITEMS` pending items, then ask again, in up to
        ``PARSE_RETRIES`` more passes, those whose reply failed to parse."""
        judge = run.judge
        if is_batch(judge.backend_config()):  # the provider's Batch API
            return batch_runs.work(run=run, lease=lease)
        template = judge.prompt_text()
        progress = ChunkProgress(
            live=LiveCounters(run, lease, run_counters),
            stale_parse_failures=Judgment.objects.filter(
                judge_key=judge.judge_id, parse_failed=True
            ).exists(),
        )
        backend = build_backend(judge.backend_config())
        try:
            inputs = _inputs_then_adopted(run, lease, template)
            for _ in range(1 + PARSE_RETRIES[judge.parse_profile]):
                if not self._judge_pass(run, judge, lease, progress, backend, inputs):
                    return True  # the engine ends a cancelled run and leaves a lost one alone
                only = lane_items(lease)  # with the lanes adopted by the first pass
                inputs = pending_inputs(
                    run, limit=CHUNK_ITEMS, template=template, retries_only=True, only=only
                )
            link_known(run, parse_failures=True, only=only)  # duplicates of what it judged
            send = partial(self._judge_pass, run, judge, lease, progress, backend)
            if not sampling.sample_pass(
                run=run, only=only, limit=CHUNK_ITEMS, send=send, progress=progress
            ):
                return True
        finally:
            backend.close()
        return pending_items(run, only).exists() or sampling.samples_pending(run=run, only=only)

    @staticmethod
    def _judge_pass(
        run, judge, lease, progress, backend, inputs, *, request=None, store=None
    ) -> bool:
        """Send ``inputs`` and store each reply as it comes; False once the lease is not held
        (cancelled or lost). ``request`` (input → request) and ``store`` (a batch of (input,
        result)) default to the judge's verdicts; the seeded samples pass their own."""
        if request is None:
            request = _request_maker(judge)
        if store is None:
            store = lambda batch: judgments_store(  # noqa: E731
                run=run, judge=judge, results=batch, progress=progress
            )
        order: list[ItemInput | None] = []
        # at most ``unstored_width`` sent and not yet stored across every lane and worker
        slots = Backpressure(
            unstored_width(backend.limits.concurrency),
            backend.unstored_gate(),
            total=len(inputs) if hasattr(inputs, "__len__") else None,  # never more slots
        )
        writer = ReplyWriter(
            name=f"judge-run-{run.pk}-writer",
            store=store,
            lease=lease,
            slots=slots,
            settle_s=SETTLE_S,
        )

        def tracked() -> Iterator[LLMRequest]:
            for inp in inputs:
                if not slots.take(writer.should_stop):
                    return
                order.append(inp)
                yield request(inp)
            slots.done_sending()  # the slots kept for more requests go back

        # a backend that takes ``admit`` keeps yielding replies while a request waits for a slot,
        # and is woken by the writer when a stored reply frees one (``Backpressure.wake``)
        hold = {"admit": slots} if takes_admit(backend) else {}
        writer.start()
        try:
            for index, result in backend.complete_iter(
                tracked(), should_stop=writer.should_stop, **hold
            ):
                slots.returned()
                writer.submit((order[index], result))
                order[index] = None
        finally:
            writer.close()
            slots.close()
        if writer.error is not None:
            raise writer.error
        return writer.state is LeaseState.HELD

    def counters(self, run: JudgeRun) -> dict[str, Any]:
        return run_counters(run)

    def outcome(self, run: JudgeRun) -> tuple[str, str]:
        failed = JudgeRunItem.objects.filter(run=run, judgment__isnull=True)
        n_failed = failed.count()
        if not n_failed:
            return RunStatus.DONE, ""
        sample = failed.exclude(error="").values_list("error", flat=True).first() or ""
        tried = failed.aggregate(most=Max("attempts"))["most"] or 1  # what was done, not the cap
        return (
            RunStatus.FAILED,
            f"{n_failed} item(s) could not be judged after {tried} attempt(s) (at most "
            f"{MAX_ITEM_ATTEMPTS}; one when retrying cannot help); first error: {sample}",
        )

    def on_resume(self, run: JudgeRun) -> None:
        """Items that failed for good get their tries back."""
        JudgeRunItem.objects.filter(
            run=run, judgment__isnull=True, attempts__gte=MAX_ITEM_ATTEMPTS
        ).update(attempts=0)
