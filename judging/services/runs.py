"""Writes for judging: judges, judge runs (launch, execute in chunks, cancel, resume)."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from benchmarks.llm.registry import build_backend
from judging import prompting
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.parsing import parse_judge_output
from judging.selectors import judgments as selectors

logger = logging.getLogger(__name__)

CHUNK_ITEMS = int(
    os.environ.get("H2R_JUDGE_CHUNK_ITEMS", "20000")
)  # items per Celery task (~1 min at 320/s)
FLUSH_EVERY = 256  # results per write
FLUSH_INTERVAL_S = 0.5
PAGE = 1000
MAX_ITEM_ATTEMPTS = 3
MTOK = Decimal(1_000_000)


def lease_seconds() -> float:
    return float(os.environ.get("H2R_JUDGE_LEASE_S", "60"))


# --- judges ------------------------------------------------------------------------------


def judge_create(*, name: str, **fields: Any) -> Judge:
    judge = Judge(name=name, **fields)
    judge.full_clean(exclude=["judge_id"])  # names the field: template, api_key_env, model, ...
    judge.save()
    return judge


def imported_judge_get_or_create(*, name: str, model: str = "") -> Judge:
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        judge = judge_create(
            name=name, backend=Judge.Backend.IMPORTED, model=model, structured_output=False
        )
    return judge


# --- building one item's prompt ----------------------------------------------------------


@dataclass(frozen=True)
class ItemInput:
    item_id: int
    content_hash: str
    source_example_id: str
    prompt: str
    n_l1: int
    n_l2: int


def item_content_hash(generation) -> str:
    p = generation.procedure
    return prompting.content_hash(
        goal=p.goal, reference_steps=p.steps, steps=generation.predicted_steps
    )


def item_input(*, item_id: int, content_hash: str, generation, template: str) -> ItemInput:
    p = generation.procedure
    ref = prompting.clean_steps(p.steps)
    cand = prompting.clean_steps(generation.predicted_steps)
    return ItemInput(
        item_id=item_id,
        content_hash=content_hash,
        source_example_id=p.source_example_id,
        prompt=prompting.render_judge_prompt(
            template=template, goal=p.goal, reference_steps=ref, steps=cand
        ),
        n_l1=len(ref),
        n_l2=len(cand),
    )


def judge_request(*, judge: Judge, prompt: str) -> LLMRequest:
    decoding = dict(judge.decoding or {})
    extra = {
        k: v
        for k, v in decoding.items()
        if k not in ("temperature", "max_tokens", "top_p", "stop") and not k.startswith("vllm_")
    }
    return LLMRequest(
        messages=[{"role": "user", "content": prompt}]
        if judge.endpoint == Judge.Endpoint.CHAT
        else None,
        prompt=prompt if judge.endpoint == Judge.Endpoint.COMPLETIONS else None,
        max_tokens=decoding.get("max_tokens"),
        temperature=float(decoding.get("temperature", 0.0)),
        top_p=decoding.get("top_p"),
        stop=decoding.get("stop"),
        json_schema=prompting.JUDGE_SCHEMA if judge.structured_output else None,
        json_schema_name=prompting.JUDGE_SCHEMA_NAME,
        extra=extra,
    )


def judgment_from_response(*, judge: Judge, inp: ItemInput, response: LLMResponse) -> Judgment:
    parsed = parse_judge_output(response.text, n_l1=inp.n_l1, n_l2=inp.n_l2)
    return Judgment(
        judge=judge,
        judge_key=judge.judge_id,
        content_hash=inp.content_hash,
        source_example_id=inp.source_example_id,
        reasoning=parsed.reasoning,
        critical_failures=parsed.critical_failures,
        has_failure=parsed.has_failure,
        n_failures=parsed.n_failures,
        parse_failed=parsed.parse_failed,
        parse_error=parsed.error[:500],
        parse_warnings=parsed.warnings,
        raw_output=response.text,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        latency_s=response.latency_s,
    )


def cost_of(*, judge: Judge, prompt_tokens: int, completion_tokens: int) -> Decimal:
    return (
        Decimal(prompt_tokens) * judge.price_input_per_mtok
        + Decimal(completion_tokens) * judge.price_output_per_mtok
    ) / MTOK


# --- launching ---------------------------------------------------------------------------


def _selection_rows(selection: dict[str, Any]) -> list[tuple[int, str, str, list, list]]:
    """(generation id, source_example_id, goal, reference steps, candidate steps) of a selection."""
    return list(
        selectors.generations_for_selection(selection)
        .values_list(
            "id",
            "procedure__source_example_id",
            "procedure__goal",
            "procedure__steps",
            "predicted_steps",
        )
        .iterator(chunk_size=2000)
    )


def judge_run_estimate(
    *, judge: Judge, selection: dict[str, Any], tokenizer: bool = True
) -> dict[str, Any]:
    """Items, how many are already judged (reused), requests, tokens and cost expected, before
    launch. Prompt tokens: o200k counts of a sample of prompts (``tokenizer``), else chars / 4."""
    selection = selectors.selection_clean(selection)
    estimate, _ = _estimate(
        judge=judge, selection=selection, rows=_selection_rows(selection), tokenizer=tokenizer
    )
    return estimate


def _estimate(
    *, judge: Judge, selection: dict[str, Any], rows: list, tokenizer: bool, sample: int = 50
) -> tuple[dict[str, Any], list[str]]:
    hashes = [prompting.content_hash(goal=g, reference_steps=r, steps=c) for _, _, g, r, c in rows]
    known: set[str] = set()
    unique = list(dict.fromkeys(hashes))
    for start in range(0, len(unique), 5000):
        known |= set(
            Judgment.objects.filter(
                judge_key=judge.judge_id, content_hash__in=unique[start : start + 5000]
            ).values_list("content_hash", flat=True)
        )
    todo = [(row, h) for row, h in zip(rows, hashes) if h not in known]
    unique_todo = len({h for _, h in todo})
    avg_prompt = 0.0
    if todo:
        template = prompting.load_template(judge.prompt_template)
        step = max(1, len(todo) // sample)
        picked = [row for row, _ in todo[::step][:sample]]
        prompts = [
            prompting.render_judge_prompt(template=template, goal=g, reference_steps=r, steps=c)
            for _, _, g, r, c in picked
        ]
        if tokenizer:
            from benchmarks.tokens import count_tokens

            avg_prompt = sum(count_tokens(p) for p in prompts) / len(prompts)
        else:
            avg_prompt = sum(len(p) for p in prompts) / 4 / len(prompts)
    prompt_tokens = int(avg_prompt * unique_todo)
    completion_tokens = judge.expected_output_tokens * unique_todo
    return {
        "n_items": len(rows),
        "n_reused": len(rows) - len(todo),
        "n_requests": unique_todo,
        "est_prompt_tokens": prompt_tokens,
        "est_completion_tokens": completion_tokens,
        "est_cost": cost_of(
            judge=judge, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        ).quantize(Decimal("0.000001")),
        "selection": selection,
    }, hashes


def _insert_items(*, run: JudgeRun, generation_ids: list[int], hashes: list[str]) -> None:
    """One INSERT from two arrays on PostgreSQL (7,000 items in ~50 ms instead of ~400 ms with
    ``bulk_create``); ``bulk_create`` elsewhere."""
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(JudgeRunItem._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (run_id, generation_id, content_hash, error, attempts) "
                "SELECT %s, g, h, '', 0 FROM unnest(%s::bigint[], %s::text[]) AS t(g, h)",
                [run.pk, generation_ids, hashes],
            )
        return
    JudgeRunItem.objects.bulk_create(
        [
            JudgeRunItem(run=run, generation_id=g, content_hash=h)
            for g, h in zip(generation_ids, hashes)
        ],
        batch_size=2000,
    )


def judge_run_create(
    *,
    judge: Judge,
    selection: dict[str, Any],
    user=None,
    enqueue: bool = True,
    estimated_cost: Decimal | None = None,
) -> JudgeRun:
    """Create a run and its items (one per selected generation) and enqueue it."""
    if judge.backend == Judge.Backend.IMPORTED:
        raise ValueError(f"judge {judge.name!r} holds imported judgments; it cannot be run")
    selection = selectors.selection_clean(selection)
    rows = _selection_rows(selection)
    estimate, hashes = _estimate(judge=judge, selection=selection, rows=rows, tokenizer=False)
    with transaction.atomic():
        run = JudgeRun.objects.create(
            judge=judge,
            selection=selection,
            created_by=user,
            n_total=len(rows),
            estimated_cost=estimated_cost if estimated_cost is not None else estimate["est_cost"],
        )
        _insert_items(run=run, generation_ids=[row[0] for row in rows], hashes=hashes)
        if enqueue:
            transaction.on_commit(lambda: enqueue_run(run_id=run.pk, backend=judge.backend))
    return run


def enqueue_run(*, run_id: int, backend: str, countdown: float | None = None) -> None:
    from judging import tasks

    from benchmarks.llm.registry import queue_for

    task = tasks.vllm_judge_run_chunk if backend == Judge.Backend.VLLM else tasks.judge_run_chunk
    task.apply_async((run_id,), countdown=countdown or None, queue=queue_for({"backend": backend}))


def judge_run_cancel(*, run: JudgeRun) -> JudgeRun:
    """Ask a run to stop: no new requests go out; what is in flight is stored."""
    with transaction.atomic():
        JudgeRun.objects.filter(pk=run.pk).update(cancel_requested=True)
        JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.PENDING, lease_owner="").update(
            status=JudgeRun.Status.CANCELLED, finished_at=timezone.now()
        )
    run.refresh_from_db()
    return run


def judge_runs_resume() -> list[int]:
    """Enqueue every active run (e.g. after its worker was killed). Safe to repeat: a run held
    by a live worker answers ``busy`` and the task looks again after the lease."""
    ids = []
    for run in JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).select_related("judge"):
        enqueue_run(run_id=run.pk, backend=run.judge.backend)
        ids.append(run.pk)
    return ids


# --- executing ---------------------------------------------------------------------------


@dataclass
class ChunkOutcome:
    status: str  # done | more | busy | cancelled | inactive | lost
    processed: int = 0
    retry_in_s: float = 0.0


def _acquire_lease(run_id: int, owner: str) -> bool:
    now = timezone.now()
    until = now + timedelta(seconds=lease_seconds())
    n = (
        JudgeRun.objects.filter(pk=run_id, status__in=JudgeRun.ACTIVE)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_owner=owner))
        .update(lease_owner=owner, lease_until=until, status=JudgeRun.Status.RUNNING)
    )
    if n:
        JudgeRun.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=now)
    return bool(n)


def _renew_lease(run_id: int, owner: str) -> bool:
    until = timezone.now() + timedelta(seconds=lease_seconds())
    return bool(JudgeRun.objects.filter(pk=run_id, lease_owner=owner).update(lease_until=until))


def _release_lease(run_id: int, owner: str) -> None:
    JudgeRun.objects.filter(pk=run_id, lease_owner=owner).update(lease_owner="", lease_until=None)


def _link_known(run: JudgeRun) -> int:
    """Point pending items at judgments this judge already made for the same content."""
    pending = JudgeRunItem.objects.filter(run=run, judgment__isnull=True)
    linked = 0
    while True:
        batch = list(pending.values_list("id", "content_hash")[:5000])
        if not batch:
            break
        known = dict(
            Judgment.objects.filter(
                judge_key=run.judge.judge_id, content_hash__in={h for _, h in batch}
            ).values_list("content_hash", "id")
        )
        matched = [(i, known[h]) for i, h in batch if h in known]
        if matched:
            with transaction.atomic():
                JudgeRunItem.objects.filter(id__in=[i for i, _ in matched]).update(
                    judgment_id=Subquery(_judgment_of_item(run.judge)), error=""
                )
                JudgeRun.objects.filter(pk=run.pk).update(
                    n_done=F("n_done") + len(matched), n_reused=F("n_reused") + len(matched)
                )
            linked += len(matched)
        if len(matched) < len(batch):
            break  # the rest are genuinely pending
    return linked


def _pending_inputs(run: JudgeRun, *, limit: int, template: str) -> Iterator[ItemInput]:
    """Pending items, one per distinct content (duplicates get linked afterwards)."""
    last_id = 0
    yielded = 0
    seen: set[str] = set()
    while yielded < limit:
        page = list(
            JudgeRunItem.objects.filter(
                run=run, judgment__isnull=True, attempts__lt=MAX_ITEM_ATTEMPTS, id__gt=last_id
            )
            .select_related("generation__procedure")
            .only(
                "id",
                "content_hash",
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
            )
            yielded += 1
            if yielded >= limit:
                return


def _judgment_of_item(judge: Judge):
    return Judgment.objects.filter(
        judge_key=judge.judge_id, content_hash=OuterRef("content_hash")
    ).values("id")[:1]


def judgments_store(
    *, run: JudgeRun, judge: Judge, results: list[tuple[ItemInput, LLMResponse | LLMError]]
) -> None:
    """Store one batch of results in one transaction: judgments, item links, run counters."""
    new = [
        judgment_from_response(judge=judge, inp=inp, response=res)
        for inp, res in results
        if isinstance(res, LLMResponse)
    ]
    failed = [(inp, res) for inp, res in results if not isinstance(res, LLMResponse)]
    prompt_tokens = sum(j.prompt_tokens for j in new)
    completion_tokens = sum(j.completion_tokens for j in new)
    with transaction.atomic():
        if new:
            Judgment.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
            # one UPDATE linking each item to the judgment of its content (unique index lookup)
            JudgeRunItem.objects.filter(
                id__in=[inp.item_id for inp, res in results if isinstance(res, LLMResponse)]
            ).update(judgment_id=Subquery(_judgment_of_item(judge)), error="")
        for inp, err in failed:
            JudgeRunItem.objects.filter(pk=inp.item_id).update(
                attempts=F("attempts") + 1, error=str(err)[:2000]
            )
        JudgeRun.objects.filter(pk=run.pk).update(
            n_done=F("n_done") + len(new),
            n_parse_failed=F("n_parse_failed") + sum(1 for j in new if j.parse_failed),
            prompt_tokens=F("prompt_tokens") + prompt_tokens,
            completion_tokens=F("completion_tokens") + completion_tokens,
            cost=F("cost")
            + cost_of(
                judge=judge, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            ),
        )


def _finish(run: JudgeRun, *, owner: str, cancelled: bool) -> None:
    items = JudgeRunItem.objects.filter(run=run)
    n_done = items.filter(judgment__isnull=False).count()
    n_errors = items.filter(judgment__isnull=True).count()
    n_parse_failed = items.filter(judgment__parse_failed=True).count()
    if cancelled:
        status, error = JudgeRun.Status.CANCELLED, ""
    elif n_errors:
        status = JudgeRun.Status.FAILED
        sample = (
            items.filter(judgment__isnull=True)
            .exclude(error="")
            .values_list("error", flat=True)
            .first()
            or ""
        )
        error = (
            f"{n_errors} item(s) failed after {MAX_ITEM_ATTEMPTS} attempts; first error: {sample}"
        )
    else:
        status, error = JudgeRun.Status.SUCCEEDED, ""
    JudgeRun.objects.filter(pk=run.pk, lease_owner=owner).update(
        status=status,
        error=error,
        n_done=n_done,
        n_errors=n_errors,
        n_parse_failed=n_parse_failed,
        finished_at=timezone.now(),
        lease_owner="",
        lease_until=None,
    )


class _Writer(threading.Thread):
    """Stores batches of results on its own thread (and DB connection), so the thread that
    feeds the backend keeps every request slot busy while a batch is written. Renews the
    run's lease and notices a cancel after each batch."""

    def __init__(self, *, run: JudgeRun, judge: Judge, owner: str) -> None:
        super().__init__(name=f"judge-run-{run.pk}-writer", daemon=True)
        self.run_obj, self.judge, self.owner = run, judge, owner
        self.batches: queue.Queue = queue.Queue(maxsize=8)
        self.state = {"cancel": False, "lost": False}
        self.error: BaseException | None = None

    def should_stop(self) -> bool:
        return self.state["cancel"] or self.state["lost"] or self.error is not None

    def submit(self, batch: list) -> None:
        self.batches.put(batch)

    def close(self) -> None:
        self.batches.put(None)
        self.join()

    def run(self) -> None:
        try:
            while True:
                batch = self.batches.get()
                if batch is None:
                    return
                if self.error is not None:
                    continue
                try:
                    if batch:
                        judgments_store(run=self.run_obj, judge=self.judge, results=batch)
                    if not _renew_lease(self.run_obj.pk, self.owner):
                        self.state["lost"] = True
                    if JudgeRun.objects.filter(pk=self.run_obj.pk, cancel_requested=True).exists():
                        self.state["cancel"] = True
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                    self.error = exc
        finally:
            connection.close()


def judge_run_execute_chunk(
    *, run_id: int, owner: str | None = None, max_items: int | None = None, backend=None
) -> ChunkOutcome:
    """Judge up to ``max_items`` pending items of a run. Idempotent and resumable: what is
    stored is never asked again; a run held by a live worker is left alone (``busy``)."""
    owner = owner or uuid.uuid4().hex
    max_items = max_items or CHUNK_ITEMS
    run = JudgeRun.objects.select_related("judge").filter(pk=run_id).first()
    if run is None or not run.is_active:
        return ChunkOutcome("inactive")
    if run.cancel_requested:
        if _acquire_lease(run_id, owner):
            _finish(run, owner=owner, cancelled=True)
        return ChunkOutcome("cancelled")
    if not _acquire_lease(run_id, owner):
        run.refresh_from_db()
        left = (run.lease_until - timezone.now()).total_seconds() if run.lease_until else 1.0
        return ChunkOutcome("busy", retry_in_s=max(0.5, left + 0.5))
    judge = run.judge
    template = prompting.load_template(judge.prompt_template)
    _link_known(run)
    backend = backend or build_backend(judge.backend_config())
    order: list[ItemInput | None] = []

    def tracked() -> Iterator[LLMRequest]:
        for inp in _pending_inputs(run, limit=max_items, template=template):
            order.append(inp)
            yield judge_request(judge=judge, prompt=inp.prompt)

    writer = _Writer(run=run, judge=judge, owner=owner)
    writer.start()
    buffer: list[tuple[ItemInput, LLMResponse | LLMError]] = []
    last_flush = time.monotonic()
    processed = 0
    try:
        for index, result in backend.complete_iter(tracked(), should_stop=writer.should_stop):
            buffer.append((order[index], result))
            order[index] = None
            processed += 1
            if len(buffer) >= FLUSH_EVERY or time.monotonic() - last_flush >= FLUSH_INTERVAL_S:
                writer.submit(buffer)
                buffer = []
                last_flush = time.monotonic()
        writer.submit(buffer)
    finally:
        writer.close()
        backend.close()
    if writer.error is not None:
        raise writer.error
    state = writer.state
    if state["lost"]:
        return ChunkOutcome("lost", processed)
    if state["cancel"]:
        _finish(run, owner=owner, cancelled=True)
        return ChunkOutcome("cancelled", processed)
    _link_known(run)
    more = JudgeRunItem.objects.filter(
        run=run, judgment__isnull=True, attempts__lt=MAX_ITEM_ATTEMPTS
    ).exists()
    if more:
        _release_lease(run_id, owner)
        return ChunkOutcome("more", processed)
    _finish(run, owner=owner, cancelled=False)
    return ChunkOutcome("done", processed)
