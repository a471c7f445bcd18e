"""A judge run's items: which are pending (in a lane), linking them to judgments this judge
already made for the same content, storing a batch of replies, counting the run from its items.
The one home of these rules for both ways a run is worked: its chunks
(:mod:`judging.services.execution`) and a provider's batch (:mod:`judging.services.batch_mode`).

A run worked in lanes (:mod:`core.runs.lanes`): lane *k* of *n* takes the items whose content
hash starts with a hex digit *d* with *d* mod *n* = *k* (:func:`lane_items`), so the duplicates
of one content always fall in the same lane (asked once).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from benchmarks.llm.base import LLMError, LLMResponse
from core.bulk_insert import bulk_insert
from core.runs.engine import Lease
from core.runs.progress import LiveCounters
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.services import sampling
from judging.services.items import (
    ItemInput,
    ask_again,
    cost_of,
    judge_parse,
    judgment_from_response,
    retry_suffix_for,
    run_item_input,
)

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
class ChunkProgress:
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


def pending_items(run: JudgeRun, only: Q = Q()):  # noqa: B008 - Q() is immutable here
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


def pending_inputs(
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
        pending = pending_items(run, only)
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
            yield run_item_input(item, template=template, retry_suffix=retry_suffix)
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
    fields = (*Judgment.OUTCOME_FIELDS, "n_calls")
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
    progress: ChunkProgress | None = None,
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
