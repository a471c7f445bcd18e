"""Writes for judge runs: estimate, create and launch (the items are prepared by the worker:
:func:`judge_run_launch_prepare`, the run type's launch preparation), cancel, resume. The run
engine (:mod:`core.runs.engine`) enqueues, leases, cancels and resumes; the judging work of one
chunk is :class:`judging.services.execution.JudgeRunExecutor`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from benchmarks.llm.preflight import preflight_error
from benchmarks.models import Generation
from core.errors import FieldRefusal
from core.runs import engine
from judging import prompting
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.selectors import judgments as selectors
from judging.services import sampling
from judging.services.items import cost_of

# --- estimating --------------------------------------------------------------------------

# generations read at a time to hash a selection (their texts dropped once hashed)
SELECTION_PAGE = 2000


def _selection_hashes(selection: dict[str, Any]) -> tuple[list[int], list[str]]:
    """Each selected generation's id and content hash (what the judge sees), in the
    selection's order. The texts are read a page at a time and dropped once hashed, so what is
    kept is an id and a hash an item (~0.2 KB), not the item's texts (~4 KB)."""
    ids: list[int] = []
    hashes: list[str] = []
    rows = (
        selectors.generations_for_selection(selection)
        .values_list("id", "procedure__goal", "procedure__steps", "predicted_steps")
        .iterator(chunk_size=SELECTION_PAGE)
    )
    for generation_id, goal, reference, steps in rows:
        ids.append(generation_id)
        hashes.append(prompting.content_hash(goal=goal, reference_steps=reference, steps=steps))
    return ids, hashes


def judge_run_estimate(
    *, judge: Judge, selection: dict[str, Any], tokenizer: bool = True
) -> dict[str, Any]:
    """Items, how many are already judged (reused), requests, tokens and cost expected, before
    launch. Prompt tokens: o200k counts of a sample of prompts (``tokenizer``), else chars / 4."""
    return selection_estimate(
        judge=judge, selection=selectors.selection_clean(selection), tokenizer=tokenizer
    )


def selection_estimate(
    *, judge: Judge, selection: dict[str, Any], tokenizer: bool = True
) -> dict[str, Any]:
    """:func:`judge_run_estimate` of a selection validated before (stored by
    :func:`~judging.selectors.judgments.selection_clean`): not validated again."""
    ids, hashes = _selection_hashes(selection)
    return _estimate(judge=judge, selection=selection, ids=ids, hashes=hashes, tokenizer=tokenizer)


def _sample_texts(ids: list[int]) -> list[tuple[str, list, list]]:
    """(goal, reference steps, candidate steps) of the generations ``ids``, in that order."""
    rows = {
        pk: (goal, reference, steps)
        for pk, goal, reference, steps in Generation.objects.filter(pk__in=ids).values_list(
            "id", "procedure__goal", "procedure__steps", "predicted_steps"
        )
    }
    return [rows[pk] for pk in ids if pk in rows]


def _estimate(
    *,
    judge: Judge,
    selection: dict[str, Any],
    ids: list[int],
    hashes: list[str],
    tokenizer: bool,
    sample: int = 50,
) -> dict[str, Any]:
    known: set[str] = set()
    unique = list(dict.fromkeys(hashes))
    for start in range(0, len(unique), 5000):
        known |= set(
            Judgment.objects.filter(
                judge_key=judge.judge_id, content_hash__in=unique[start : start + 5000]
            ).values_list("content_hash", flat=True)
        )
    todo = [i for i, h in enumerate(hashes) if h not in known]
    unique_todo = len({hashes[i] for i in todo})
    avg_prompt = 0.0
    if todo:
        template = judge.prompt_text()
        step = max(1, len(todo) // sample)
        picked = [ids[i] for i in todo[::step][:sample]]  # their texts read again: 50 rows
        prompts = [
            prompting.render_judge_prompt(template=template, goal=g, reference_steps=r, steps=c)
            for g, r, c in _sample_texts(picked)
        ]
        if tokenizer:
            from benchmarks.tokens import count_tokens

            avg_prompt = sum(count_tokens(p) for p in prompts) / len(prompts)
        else:
            avg_prompt = sum(len(p) for p in prompts) / 4 / len(prompts)
    prompt_tokens = int(avg_prompt * unique_todo)
    completion_tokens = judge.expected_output_tokens * unique_todo
    return {
        "n_items": len(ids),
        "n_reused": len(ids) - len(todo),
        "n_requests": unique_todo,
        "est_prompt_tokens": prompt_tokens,
        "est_completion_tokens": completion_tokens,
        "est_cost": cost_of(
            judge=judge, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        ).quantize(Decimal("0.000001")),
        "selection": selection,
    }


# --- launching ---------------------------------------------------------------------------


def _insert_items(*, run: JudgeRun, generation_ids: list[int], hashes: list[str]) -> None:
    """One INSERT from two arrays on PostgreSQL (7,000 items in ~50 ms instead of ~400 ms with
    ``bulk_create``); ``bulk_create`` elsewhere."""
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(JudgeRunItem._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (run_id, generation_id, content_hash, reused, error, "
                "attempts, parse_tries, retry_prompt_tokens, retry_completion_tokens) "
                "SELECT %s, g, h, false, '', 0, 0, 0, 0 "
                "FROM unnest(%s::bigint[], %s::text[]) AS t(g, h)",
                [run.pk, generation_ids, hashes],
            )
        return
    JudgeRunItem.objects.bulk_create(
        [
            JudgeRunItem(run=run, generation_id=g, content_hash=h)
            for g, h in zip(generation_ids, hashes, strict=True)
        ],
        batch_size=2000,
    )


def imported_refusal(judge: Judge) -> str:
    return f"judge {judge.name!r} holds imported judgments; it cannot be run"


def judge_run_create(
    *,
    judge: Judge,
    selection: dict[str, Any],
    user=None,
    enqueue: bool = True,
    estimated_cost: Decimal | None = None,
    n_samples: int = 1,
    sample_seed: int = 0,
) -> JudgeRun:
    """Create a run (its size counted with one COUNT) and launch it: its first chunk is
    enqueued when the transaction commits, and the worker selects, hashes and inserts its items
    before judging (:func:`judge_run_prepare`), so the request stays short whatever the run's
    size. Without ``enqueue`` (commands, ``--inline``) the items are inserted here.
    ``n_samples`` k > 1 also asks k seeded samples per judged content
    (:mod:`judging.services.sampling`), seeds ``sample_seed`` … ``sample_seed + k − 1``."""
    if judge.backend == Judge.Backend.IMPORTED:
        raise FieldRefusal({"judge": imported_refusal(judge)})
    problems = sampling.check_samples(n_samples, sample_seed)
    if problems:
        raise FieldRefusal(problems)
    selection = selectors.selection_clean(selection)
    if enqueue:
        judge_launch_check(judge=judge)
    with transaction.atomic():
        run = JudgeRun.objects.create(
            judge=judge,
            selection=selection,
            created_by=user,
            n_total=selectors.generations_for_selection(selection).count(),
            estimated_cost=estimated_cost,
            n_samples=n_samples,
            sample_seed=sample_seed,
        )
        if enqueue:
            engine.launch(run)
        else:
            run = judge_run_prepare(run=run)
    return run


def judge_run_prepare(*, run: JudgeRun, token: str | None = None, lease=None) -> JudgeRun:
    """Select the run's generations, hash each item's content and insert the items (one
    statement), then set ``n_total``, ``estimated_cost`` (unless given at launch) and
    ``prepared_at``, all in one transaction. Done once: by the worker holding the run's lease
    (``token``), or the lease of one of its lanes (``lease``; the other lanes wait for the row
    lock and find it prepared), before the first chunk, or by :func:`judge_run_create` without
    ``enqueue``."""
    ids, hashes = _selection_hashes(run.selection)  # the estimator only when no cost was given
    cost = run.estimated_cost
    if cost is None:  # launched without an estimate: the quick one (chars / 4 for tokens)
        cost = _estimate(
            judge=run.judge, selection=run.selection, ids=ids, hashes=hashes, tokenizer=False
        )["est_cost"]
    with transaction.atomic():
        mine = JudgeRun.objects.select_for_update().filter(pk=run.pk, prepared_at__isnull=True)
        if token is not None:
            mine = mine.filter(lease_owner=token)
        if lease is not None:
            mine = mine.filter(pk__in=lease.held().values("pk"))
        locked = mine.first()
        if locked is None:  # prepared already, or the lease was lost meanwhile
            run.refresh_from_db()
            return run
        _insert_items(run=run, generation_ids=ids, hashes=hashes)
        JudgeRun.objects.filter(pk=run.pk).update(
            n_total=len(ids),
            prepared_at=timezone.now(),
            estimated_cost=locked.estimated_cost if locked.estimated_cost is not None else cost,
        )
    run.refresh_from_db()
    return run


def judge_run_launch_prepare(run: JudgeRun, lease) -> None:
    """A launched run's items selected and hashed by the worker holding its lease, before its
    first chunk (the run type's launch preparation, :mod:`judging.apps`; called before each
    chunk: nothing once ``prepared_at``). The console and the API only create the run row (its
    size is one COUNT): inserting 70,000 items takes seconds."""
    if run.prepared_at is None:
        judge_run_prepare(run=run, lease=lease)


# --- cancel / resume -----------------------------------------------------------------------


def judge_run_cancel(*, run: JudgeRun) -> JudgeRun:
    """Stop a run: a queued one at once; a running one stops sending requests, stores what is in
    flight and ends ``cancelled`` (``cancelling`` meanwhile). Judged items are kept."""
    try:
        return engine.cancel(run)
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from exc


def judge_launch_check(*, judge: Judge) -> None:
    """Refuse to hand a run to the workers when the judge's API key variable is unset or its
    server does not serve its model (:mod:`benchmarks.llm.preflight`), naming why."""
    reason = preflight_error(judge.backend_config())
    if reason:
        raise ValidationError({"judge": f"judge {judge.name!r} cannot be launched: {reason}"})


def judge_run_resume(*, run: JudgeRun, force: bool = False, enqueue: bool = True) -> JudgeRun:
    """Queue a failed, cancelled or orphaned run again: what it judged is kept, items that
    failed for good are tried again. ``force`` takes over a run whose worker looks alive."""
    if enqueue:
        judge_launch_check(judge=run.judge)
    try:
        return engine.resume(run, force=force, enqueue=enqueue)
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from exc


def judge_run_rerun_failures(*, run: JudgeRun, enqueue: bool = True) -> JudgeRun:
    """Work again only what a done or failed run could not judge: items whose request failed
    for good and items whose judgment is a parse failure (asked again, the stored parse failure
    replaced); everything judged is kept. A cancelled run is resumed instead."""
    if run.status not in (JudgeRun.Status.DONE, JudgeRun.Status.FAILED):
        raise ValidationError(
            f"run {run.pk} is {run.status}: only a done or failed run re-runs its failures"
            + (" (resume a cancelled one)" if run.status == JudgeRun.Status.CANCELLED else "")
        )
    if enqueue:
        judge_launch_check(judge=run.judge)
    with transaction.atomic():
        JudgeRunItem.objects.filter(run=run, judgment__parse_failed=True).update(
            judgment=None,
            reused=False,
            parse_tries=0,
            retry_prompt_tokens=0,
            retry_completion_tokens=0,
            error="",
        )
        if not JudgeRunItem.objects.filter(run=run, judgment__isnull=True).exists():
            raise ValidationError(f"run {run.pk} has no failures to re-run")
        try:
            return engine.resume(run, enqueue=enqueue, done_too=True)
        except engine.RunStateError as exc:
            raise ValidationError(str(exc)) from exc
