"""Seeded samples of a judge run (``n_samples`` = k > 1), for calibration.

After a chunk's items are judged, each judged content of the chunk's lane is asked k more
times, once per seed ``sample_seed + i`` (sent as the request's ``seed``; the rest of the
request is the judge's own), and every reply is stored as a :class:`JudgmentSample` of the
item's judgment — the run's verdict stays the judgment, made as without samples. Samples
belong to the content (judge + content hash), so a later run with the same seeds reuses them
and asks only for the seeds missing. A reply is parsed by the judge's parse profile once (no
parse retries: a reply that does not parse is stored ``parse_failed`` and casts no vote); a
request that fails for good is stored with its ``error`` (no vote, not asked again).

The sending is the judge run's own pass (:meth:`JudgeRunExecutor._judge_pass`: backpressure,
the writer thread, the lease), handed in as ``send`` so this module does not import the
executor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, Sum

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from judging import prompting
from judging.models import Judge, JudgeRun, JudgeRunItem, JudgmentSample
from judging.services.items import ItemInput, item_input, judge_parse, judge_request

MAX_SAMPLES = 20
PAGE = 1000


@dataclass(frozen=True)
class SampleInput:
    """One sample to ask: an item's prompt, the judgment it samples, the seed."""

    inp: ItemInput
    judgment_id: int
    seed: int

    @property
    def prompt(self) -> str:
        return self.inp.prompt


def sample_request(*, judge: Judge, sample: SampleInput) -> LLMRequest:
    """The judge's request for the item, with the sample's decoding ``seed``."""
    request = judge_request(judge=judge, prompt=sample.prompt)
    return dataclasses.replace(request, extra={**request.extra, "seed": sample.seed})


def _missing(run: JudgeRun, only: Q):
    """The run's items (of ``only``: a lane) whose judgment lacks one of the run's seeds."""
    seeds = run.sample_seeds
    return (
        JudgeRunItem.objects.filter(only, run=run, judgment__isnull=False)
        .annotate(n_have=Count("judgment__samples", filter=Q(judgment__samples__seed__in=seeds)))
        .filter(n_have__lt=len(seeds))
    )


def samples_pending(*, run: JudgeRun, only: Q = Q()) -> bool:  # noqa: B008 - Q() is immutable
    return bool(run.sample_seeds) and _missing(run, only).exists()


def pending_samples(*, run: JudgeRun, only: Q, limit: int) -> Iterator[SampleInput]:
    """Up to ``limit`` samples still to ask, one per (judgment, missing seed)."""
    seeds = run.sample_seeds
    template = prompting.load_template(run.judge.prompt_template)
    yielded, last_id = 0, 0
    seen: set[int] = set()
    while yielded < limit:
        page = list(
            _missing(run, only)
            .filter(id__gt=last_id)
            .select_related("generation__procedure")
            .order_by("id")[:PAGE]
        )
        if not page:
            return
        have: dict[int, set[int]] = {}
        for jid, seed in JudgmentSample.objects.filter(
            judgment_id__in={item.judgment_id for item in page}, seed__in=seeds
        ).values_list("judgment_id", "seed"):
            have.setdefault(jid, set()).add(seed)
        for item in page:
            last_id = item.id
            if item.judgment_id in seen:  # duplicates of one content share the judgment
                continue
            seen.add(item.judgment_id)
            inp = item_input(
                item_id=item.id,
                content_hash=item.content_hash,
                generation=item.generation,
                template=template,
            )
            for seed in seeds:
                if seed in have.get(item.judgment_id, ()):
                    continue
                yield SampleInput(inp=inp, judgment_id=item.judgment_id, seed=seed)
                yielded += 1
                if yielded >= limit:
                    return


def samples_store(
    *,
    run: JudgeRun,
    judge: Judge,
    results: list[tuple[SampleInput, LLMResponse | LLMError]],
    progress: Any = None,
) -> None:
    """Store one batch of sample replies in one transaction (a seed already stored is kept),
    then the run's live counters."""
    rows = []
    for sample, res in results:
        if isinstance(res, LLMResponse):
            parsed = judge_parse(judge=judge, inp=sample.inp, text=res.text)
            rows.append(
                JudgmentSample(
                    judgment_id=sample.judgment_id,
                    run=run,
                    seed=sample.seed,
                    has_failure=parsed.has_failure,
                    n_failures=parsed.n_failures,
                    parse_failed=parsed.parse_failed,
                    parse_error=parsed.error[:500],
                    reasoning=parsed.reasoning,
                    critical_failures=parsed.critical_failures,
                    raw_output=res.text or "",
                    prompt_tokens=res.prompt_tokens,
                    completion_tokens=res.completion_tokens,
                    latency_s=res.latency_s,
                )
            )
        else:
            rows.append(
                JudgmentSample(
                    judgment_id=sample.judgment_id,
                    run=run,
                    seed=sample.seed,
                    parse_failed=True,
                    error=str(res)[:2000] or type(res).__name__,
                )
            )
    with transaction.atomic():
        JudgmentSample.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)
    if progress is not None:
        progress.write()


def sample_pass(
    *, run: JudgeRun, only: Q, limit: int, send: Callable[..., bool], progress: Any = None
) -> bool:
    """Ask the lane's missing samples (at most ``limit``) through ``send(inputs, request=,
    store=)``; False once the lease is not held. Nothing to do for a run without samples."""
    if not run.sample_seeds:
        return True
    judge = run.judge
    return send(
        pending_samples(run=run, only=only, limit=limit),
        request=lambda sample: sample_request(judge=judge, sample=sample),
        store=lambda batch: samples_store(run=run, judge=judge, results=batch, progress=progress),
    )


def sample_tokens(run: JudgeRun) -> tuple[int, int]:
    """(prompt, completion) tokens of the samples this run asked for."""
    if run.n_samples <= 1:
        return 0, 0
    agg = JudgmentSample.objects.filter(run=run).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens")
    )
    return agg["p"] or 0, agg["c"] or 0


def check_samples(n_samples: Any, sample_seed: Any) -> dict[str, str]:
    """Field errors of a launch's sampling options (empty when they are fine)."""
    errors = {}
    if isinstance(n_samples, bool) or not isinstance(n_samples, int):
        errors["samples"] = "expected a whole number"
    elif not 1 <= n_samples <= MAX_SAMPLES:
        errors["samples"] = f"expected 1 (no samples) to {MAX_SAMPLES}, got {n_samples}"
    if isinstance(sample_seed, bool) or not isinstance(sample_seed, int):
        errors["sample_seed"] = "expected a whole number"
    elif not 0 <= sample_seed <= 2**31 - 1 - MAX_SAMPLES:
        errors["sample_seed"] = f"expected 0 to {2**31 - 1 - MAX_SAMPLES}, got {sample_seed}"
    return errors
