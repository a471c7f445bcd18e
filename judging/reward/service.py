"""The reward service's reads and writes around the judge call: resolve the items (stored
examples or inline procedures), reuse this judge's stored judgment of the same content (the
cache: a judgment is unique per judge and content hash, shared with judge runs), and store the
new judgments. The judge call itself goes through :mod:`judging.reward.batcher`."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from benchmarks.llm.base import LLMError, LLMResponse
from benchmarks.llm.registry import queue_for
from benchmarks.models import Procedure
from benchmarks.selectors.catalog import DatasetRefError, dataset_resolve
from judging import prompting
from judging.models import Judge, Judgment
from judging.reward import spec
from judging.services.items import ItemInput, judge_parse, judge_request, judgment_from_response
from judging.services.run_items import replace_parse_failed


@dataclass
class Prepared:
    judge: Judge
    items: list[spec.RewardItem]
    weights: dict[str, float]
    parts: list[spec.Components]
    hashes: list[str]
    cached: dict[str, Judgment] = field(default_factory=dict)
    misses: list[ItemInput] = field(default_factory=list)


def _resolve_examples(items: list[spec.RewardItem]) -> None:
    """Fill goal, resources and reference steps of items given by ``example_id``;
    :class:`spec.BatchError` naming every item that does not resolve to one procedure."""
    errors = []
    wanted = [i for i in items if i.example_id is not None]
    if not wanted:
        return
    datasets: dict[str | None, Any] = {}
    for item in wanted:
        if item.dataset is not None and item.dataset not in datasets:
            try:
                datasets[item.dataset] = dataset_resolve(item.dataset)
            except DatasetRefError as exc:
                datasets[item.dataset] = None
                errors.append(
                    {
                        "index": item.index,
                        "field": f"items[{item.index}].dataset",
                        "message": str(exc),
                    }
                )
    found: dict[str, list[Procedure]] = defaultdict(list)
    for p in Procedure.objects.filter(source_example_id__in={i.example_id for i in wanted}).only(
        "id", "dataset_id", "source_example_id", "goal", "resources", "steps"
    ):
        found[p.source_example_id].append(p)
    for item in wanted:
        if item.dataset is not None and datasets.get(item.dataset) is None:
            continue
        candidates = found.get(item.example_id, [])
        if item.dataset is not None:
            candidates = [p for p in candidates if p.dataset_id == datasets[item.dataset].pk]
        where = f"items[{item.index}].example_id"
        if not candidates:
            errors.append(
                {"index": item.index, "field": where, "message": f"no example {item.example_id!r}"}
            )
        elif len(candidates) > 1:
            errors.append(
                {
                    "index": item.index,
                    "field": where,
                    "message": f"example {item.example_id!r} is in several datasets; give dataset",
                }
            )
        else:
            p = candidates[0]
            item.goal = p.goal
            item.resources = list(p.resources or [])
            item.reference_steps = prompting.clean_steps(p.steps or [])
            item.source_example_id = p.source_example_id
    if errors:
        raise spec.BatchError(errors)


def judge_for(name: str) -> Judge:
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise spec.BatchError([{"index": None, "field": "judge", "message": f"no judge {name!r}"}])
    if queue_for(judge.backend_config()) is not None:
        raise spec.BatchError(
            [
                {
                    "index": None,
                    "field": "judge",
                    "message": f"judge {name!r} runs vLLM in-process (a GPU worker); the reward "
                    "service needs an HTTP judge (e.g. a vLLM server through the openai backend)",
                }
            ]
        )
    return judge


def prepare(
    *, judge_name: str, items: list[spec.RewardItem], weights: dict[str, float]
) -> Prepared:
    """Resolve the items, compute the verifiable components, look up cached judgments and
    list the distinct contents still to judge (with their prompts)."""
    judge = judge_for(judge_name)
    _resolve_examples(items)
    template = judge.prompt_text()
    parts = [spec.components(item) for item in items]
    hashes = [
        prompting.content_hash(
            goal=item.goal, reference_steps=item.reference_steps, steps=p.predicted_steps
        )
        for item, p in zip(items, parts, strict=True)
    ]
    prepared = Prepared(judge=judge, items=items, weights=weights, parts=parts, hashes=hashes)
    for j in Judgment.objects.filter(
        judge_key=judge.judge_id, content_hash__in=set(hashes), parse_failed=False
    ):
        prepared.cached[j.content_hash] = j
    seen = set(prepared.cached)
    for item, p, h in zip(items, parts, hashes, strict=True):
        if h in seen:
            continue
        seen.add(h)
        ref = item.reference_steps
        cand = prompting.clean_steps(p.predicted_steps)
        prepared.misses.append(
            ItemInput(
                item_id=item.index,
                content_hash=h,
                source_example_id=item.source_example_id,
                prompt=prompting.render_judge_prompt(
                    template=template, goal=item.goal, reference_steps=ref, steps=cand
                ),
                n_l1=len(ref),
                n_l2=len(cand),
            )
        )
    return prepared


def requests_for(prepared: Prepared):
    return [judge_request(judge=prepared.judge, prompt=inp.prompt) for inp in prepared.misses]


def _verdict(j: Judgment, *, cached: bool) -> dict[str, Any]:
    return {
        "judgment_id": j.pk,
        "has_failure": j.has_failure,
        "n_failures": j.n_failures,
        "critical_failures": j.critical_failures,
        "parse_failed": j.parse_failed,
        "cached": cached,
    }


def finish(prepared: Prepared, results: list[LLMResponse | LLMError]) -> dict[str, Any]:
    """Store the new judgments (one transaction) and build the per-item rewards."""
    judge = prepared.judge
    new, failed = [], {}
    for inp, res in zip(prepared.misses, results, strict=True):
        if isinstance(res, LLMResponse):
            parsed = judge_parse(judge=judge, inp=inp, text=res.text)
            new.append(judgment_from_response(judge=judge, inp=inp, response=res, parsed=parsed))
        else:
            failed[inp.content_hash] = f"judge request failed: {res}"
    if new:
        with transaction.atomic():
            Judgment.objects.bulk_create(
                replace_parse_failed(judge=judge, new=new), ignore_conflicts=True
            )
    stored = {
        j.content_hash: j
        for j in Judgment.objects.filter(
            judge_key=judge.judge_id, content_hash__in={j.content_hash for j in new}
        )
    }
    out = []
    for item, parts, h in zip(prepared.items, prepared.parts, prepared.hashes, strict=True):
        judgment = prepared.cached.get(h)
        verdict = _verdict(judgment, cached=True) if judgment else None
        error = ""
        if judgment is None and h in stored:
            verdict = _verdict(stored[h], cached=False)
            if stored[h].parse_failed:
                error = f"the judge's reply did not parse ({stored[h].parse_error})"
        elif judgment is None:
            error = failed.get(h, "no verdict")
        out.append(spec.item_result(item, parts, verdict, prepared.weights, error))
    return {
        "judge": judge.name,
        "judge_id": judge.judge_id,
        "n_items": len(prepared.items),
        "n_cached": sum(1 for h in prepared.hashes if h in prepared.cached),
        "n_judged": len(prepared.misses),
        "results": out,
    }
