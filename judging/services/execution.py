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
again — except a parse failure made before the run, which is asked again. The run's counters
are counted from its items (:func:`run_counters`).

A run is worked in ``settings.JUDGE_RUN_LANES`` lanes (:mod:`core.runs.lanes`): lane *k* of *n* takes the items
whose content hash starts with a hex digit *d* with *d* mod *n* = *k*, so several workers work
one run at once and the duplicates of one content always fall in the same lane (asked once).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse, takes_admit
from benchmarks.llm.batch import is_batch
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.services import batch_runs
from core.bulk_insert import bulk_insert
from core.runs.engine import Lease, LeaseState, RunExecutor
from core.runs.lanes import MAX_LANES
from core.runs.models import RunStatus
from core.runs.progress import LiveCounters
from core.runs.reply_writer import (
    FLUSH_EVERY,  # noqa: F401 - part of this module's interface (benchmarks read it here)
    SETTLE_S,
    Backpressure,
    ReplyWriter,
    unstored_max,
)
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.parsing import PARSE_RETRIES
from judging.services import sampling
from judging.services.items import (
    ItemInput,
    ask_again,
    cost_of,
    item_input,
    judge_parse,
    judge_request,
    judgment_from_response,
    retry_suffix_for,
)

CHUNK_ITEMS = int(
    os.environ.get("H2R_JUDGE_CHUNK_ITEMS", "20000")
)  # items per chunk task (~1 min at 320/s)
PAGE = 1000
MAX_ITEM_ATTEMPTS = 3
HEX = "0123456789abcdef"


def lane_items(lease: Lease | None, lanes: list[int] | None = None) -> Q:
    """The run items of the lanes the lease holds, or of ``lanes`` (all of them for a run not
    worked in lanes)."""
    if lease is None or lease.lane is None or lease.n_lanes <= 1:
        return Q()
    held = set(lease.held_lanes() if lanes is None else lanes)
    mine = Q()
    for digit in HEX:
        if int(digit, 16) % lease.n_lanes in held:
            mine |= Q(content_hash__startswith=digit)
    return mine


def _inputs_then_adopted(run: JudgeRun, lease: Lease, template: str) -> Iterator[ItemInput]:
    """The chunk's pending items, then — once they are all sent — those of each lane it can
    adopt (:meth:`core.runs.engine.Lease.adopt`: a free lane of the same run), so one worker
    goes from lane to lane with its requests still in flight instead of draining them."""
    yield from _pending_inputs(run, limit=CHUNK_ITEMS, template=template, only=lane_items(lease))
    while (lane := lease.adopt()) is not None:
        link_known(run, only=lane_items(lease, [lane]))
        yield from _pending_inputs(
            run, limit=CHUNK_ITEMS, template=template, only=lane_items(lease, [lane])
        )


# --- counting -------------------------------------------------------------------------------


def run_counters(run: JudgeRun) -> dict[str, Any]:
    """The run's counters from its items (one query): items, judged (new or reused), failed for
    good, reused, parse failures; tokens and cost of the judgments it asked for."""
    asked = Q(reused=False)
    agg = JudgeRunItem.objects.filter(run=run).aggregate(
        n_total=Count("id"),
        n_done=Count("judgment"),
        n_failed=Count("id", filter=Q(judgment__isnull=True, attempts__gte=MAX_ITEM_ATTEMPTS)),
        n_reused=Count("id", filter=Q(reused=True, judgment__isnull=False)),
        n_parse_failed=Count("id", filter=Q(judgment__parse_failed=True)),
        prompt_tokens=Sum("judgment__prompt_tokens", filter=asked),
        completion_tokens=Sum("judgment__completion_tokens", filter=asked),
    )
    sample_prompt, sample_completion = sampling.sample_tokens(run)  # k > 1 seeded samples
    agg["prompt_tokens"] = (agg["prompt_tokens"] or 0) + sample_prompt
    agg["completion_tokens"] = (agg["completion_tokens"] or 0) + sample_completion
    agg["cost"] = cost_of(
        judge=run.judge,
        prompt_tokens=agg["prompt_tokens"],
        completion_tokens=agg["completion_tokens"],
    )
    return agg


@dataclass
class _Progress:
    """What the writes of one chunk share: the run's live counters (counted from its items by
    :func:`run_counters`, never added: :class:`core.runs.progress.LiveCounters`, like every run
    type) and whether this judge held parse failures when the chunk started (they are replaced
    when their content is judged again; without any, the store skips that lookup)."""

    live: LiveCounters
    stale_parse_failures: bool = True

    def write(self) -> None:
        self.live.write()


# --- items ----------------------------------------------------------------------------------


def _judgment_of_item(judge: Judge, *only: Q):
    return Judgment.objects.filter(
        *only, judge_key=judge.judge_id, content_hash=OuterRef("content_hash")
    ).values("id")[:1]


def _reusable(*, parse_failures: bool) -> Q:
    """Judgments an item may be linked to: any that parsed; parse failures only when
    ``parse_failures`` (the duplicates of what the chunk just asked). A parse failure found
    before a chunk is asked again instead of reused."""
    return Q() if parse_failures else Q(parse_failed=False)


def _pending(run: JudgeRun, only: Q = Q()):  # noqa: B008 - Q() is immutable here
    return JudgeRunItem.objects.filter(
        only, run=run, judgment__isnull=True, attempts__lt=MAX_ITEM_ATTEMPTS
    )


def link_known(run: JudgeRun, *, parse_failures: bool = False, only: Q = Q()) -> int:  # noqa: B008
    """Point pending items (of ``only``: a lane) at judgments this judge already made for the
    same content (parse failures too only with ``parse_failures``: after a chunk, for the
    duplicates of what it asked)."""
    reusable = _reusable(parse_failures=parse_failures)
    pending = JudgeRunItem.objects.filter(only, run=run, judgment__isnull=True)
    linked = 0
    while True:
        batch = list(pending.values_list("id", "content_hash")[:5000])
        if not batch:
            break
        known = set(
            Judgment.objects.filter(
                reusable,
                judge_key=run.judge.judge_id,
                content_hash__in={h for _, h in batch},
            ).values_list("content_hash", flat=True)
        )
        matched = [i for i, h in batch if h in known]
        if matched:
            JudgeRunItem.objects.filter(id__in=matched).update(
                judgment_id=Subquery(_judgment_of_item(run.judge, reusable)),
                error="",
                reused=True,
            )
            linked += len(matched)
        if len(matched) < len(batch):
            break  # the rest are genuinely pending
    return linked


def _pending_inputs(
    run: JudgeRun,
    *,
    limit: int,
    template: str,
    retries_only: bool = False,
    only: Q = Q(),  # noqa: B008
) -> Iterator[ItemInput]:
    """Pending items, one per distinct content (duplicates get linked afterwards);
    ``retries_only``: those whose reply failed to parse, to ask again."""
    retry_suffix = retry_suffix_for(run.judge)
    last_id = 0
    yielded = 0
    seen: set[str] = set()
    while yielded < limit:
        pending = _pending(run, only)
        pending = pending.filter(parse_tries__gt=0) if retries_only else pending
        page = list(
            pending.filter(id__gt=last_id)
            .select_related("generation__procedure")
            .only(
                "id",
                "content_hash",
                "attempts",
                "parse_tries",
                "retry_prompt_tokens",
                "retry_completion_tokens",
                "generation__predicted_steps",
                "generation__procedure__goal",
                "generation__procedure__steps",
                "generation__procedure__source_example_id",
            )
            .order_by("id")[:PAGE]
        )
        if not page:
            return
        for item in page:
            last_id = item.id
            if item.content_hash in seen:
                continue
            seen.add(item.content_hash)
            yield item_input(
                item_id=item.id,
                content_hash=item.content_hash,
                generation=item.generation,
                template=template,
                attempts=item.attempts,
                parse_tries=item.parse_tries,
                retry_suffix=retry_suffix,
                retry_prompt_tokens=item.retry_prompt_tokens,
                retry_completion_tokens=item.retry_completion_tokens,
            )
            yielded += 1
            if yielded >= limit:
                return


def replace_parse_failed(*, judge: Judge, new: list[Judgment]) -> list[Judgment]:
    """Judgments of content whose stored judgment failed to parse replace it (a later run asks
    again instead of reusing a parse failure); returns the ones still to create."""
    stale = set(
        Judgment.objects.filter(
            judge_key=judge.judge_id,
            content_hash__in={j.content_hash for j in new},
            parse_failed=True,
        ).values_list("content_hash", flat=True)
    )
    if not stale:
        return new
    fields = [
        "reasoning",
        "critical_failures",
        "has_failure",
        "n_failures",
        "parse_failed",
        "parse_error",
        "parse_warnings",
        "raw_output",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "n_calls",
    ]
    now = timezone.now()
    for j in new:
        if j.content_hash in stale:
            Judgment.objects.filter(
                judge_key=judge.judge_id, content_hash=j.content_hash, parse_failed=True
            ).update(created_at=now, **{f: getattr(j, f) for f in fields})
    return [j for j in new if j.content_hash not in stale]


def _attempts_after(inp: ItemInput, err: Any) -> int:
    """An item's attempts after a failed request: one more, or all of them at once when trying
    again cannot help (a non-retryable error such as a prompt longer than the model's context
    or a 400), so no request is spent on it twice."""
    if isinstance(err, LLMError) and not err.retryable:
        return MAX_ITEM_ATTEMPTS
    return inp.attempts + 1


def judgments_store(
    *,
    run: JudgeRun,
    judge: Judge,
    results: list[tuple[ItemInput, LLMResponse | LLMError]],
    progress: _Progress | None = None,
) -> None:
    """Store one batch of results in one transaction: judgments, item links (an item whose
    request failed counts one more attempt; one whose reply failed to parse and has retries
    left counts one more parse try and stays pending); then the run's live counters, counted
    from its items."""
    new: list[Judgment] = []
    answered: list[int] = []
    again: list[tuple[ItemInput, LLMResponse, str]] = []
    for inp, res in results:
        if not isinstance(res, LLMResponse):
            continue
        parsed = judge_parse(judge=judge, inp=inp, text=res.text)
        if ask_again(judge=judge, inp=inp, parsed=parsed):
            again.append((inp, res, parsed.error))
            continue
        new.append(judgment_from_response(judge=judge, inp=inp, response=res, parsed=parsed))
        answered.append(inp.item_id)
    failed = [(inp, res) for inp, res in results if not isinstance(res, LLMResponse)]
    with transaction.atomic():
        if new:
            stale = progress is None or progress.stale_parse_failures
            to_create = replace_parse_failed(judge=judge, new=new) if stale else new
            # one INSERT compiled once and bound on the server (core.bulk_insert)
            bulk_insert(Judgment, to_create, ignore_conflicts=True)
            # one UPDATE linking each item to the judgment of its content (unique index lookup)
            JudgeRunItem.objects.filter(id__in=answered).update(
                judgment_id=Subquery(_judgment_of_item(judge)), error="", reused=False
            )
        for inp, res, error in again:
            JudgeRunItem.objects.filter(pk=inp.item_id).update(
                parse_tries=F("parse_tries") + 1,
                retry_prompt_tokens=F("retry_prompt_tokens") + res.prompt_tokens,
                retry_completion_tokens=F("retry_completion_tokens") + res.completion_tokens,
                error=f"reply {inp.parse_tries + 1} failed to parse ({error}); asked again"[:2000],
            )
        for inp, err in failed:
            JudgeRunItem.objects.filter(pk=inp.item_id).update(
                attempts=_attempts_after(inp, err), error=str(err)[:2000]
            )
    if progress is not None:
        progress.write()  # counted from the items, now stored


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

    # judge runs in batch mode (by path: that module imports this one)
    batch_adapter_path = "judging.services.batch_mode.JudgeRunBatches"

    def prepare(self, run: JudgeRun, lease: Lease) -> None:
        link_known(run, only=lane_items(lease))

    def work_chunk(self, run: JudgeRun, lease: Lease) -> bool | str:
        """Judge up to :data:`CHUNK_ITEMS` pending items, then ask again, in up to
        ``PARSE_RETRIES`` more passes, those whose reply failed to parse."""
        judge = run.judge
        if is_batch(judge.backend_config()):  # the provider's Batch API
            return batch_runs.work(run=run, lease=lease)
        template = judge.prompt_text()
        progress = _Progress(
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
                inputs = _pending_inputs(
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
        return _pending(run, only).exists() or sampling.samples_pending(run=run, only=only)

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
        # at most ``concurrency`` sent and not yet stored across every lane and worker
        slots = Backpressure(
            unstored_max() or backend.limits.concurrency,
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
