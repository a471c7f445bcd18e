"""Generation runs: create, start/resume, execute one chunk, cancel, finalise; and the
D.3/E.4 scorer summary per generator.

A run walks the procedures of its selection in id order, ``chunk_size`` at a time. Each
chunk is one Celery task (``benchmarks.tasks.generation_run_chunk``) that sends the chunk's
requests concurrently, stores the generations, advances ``cursor`` and enqueues the next
chunk in the same transaction. A chunk task whose ``epoch`` is not the run's current one does
nothing, so a redelivered message from a killed worker cannot start a second chain. A
procedure that already has a generation by this generator is never asked again (and the
unique constraint on (procedure, generator) backs that up), so a chunk re-run after a crash
adds no duplicate; resuming starts a new epoch from the beginning of the selection, which
picks up whatever is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from benchmarks import generation as gen
from benchmarks import scorers as sc
from benchmarks.llm.base import LLMBackend, LLMError, LLMRequest, LLMResponse
from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure, Topic
from benchmarks.tokens import count_steps_tokens

logger = logging.getLogger(__name__)

MTOK = Decimal(1_000_000)
GPU_QUEUE = "gpu"
FATAL_STATUSES = {401, 403, 404}  # a whole chunk refused with these stops the run
DECODING_KEYS = {"temperature", "max_tokens", "stop", "top_p", "extra"}


class GenerationRunError(ValueError):
    """A run that cannot be created or started, with a message naming what is wrong."""


# --- selection ---------------------------------------------------------------------------------
def generation_run_selection(*, run: GenerationRun) -> QuerySet[Procedure]:
    qs = Procedure.objects.filter(dataset_id=run.dataset_id)
    topic_ids = list(run.topics.values_list("pk", flat=True))
    if topic_ids:
        qs = qs.filter(topic_id__in=topic_ids)
    return qs


def _done_count(run: GenerationRun) -> int:
    return Generation.objects.filter(
        generator_id=run.generator_id, procedure__in=generation_run_selection(run=run)
    ).count()


# --- create / start / cancel ---------------------------------------------------------------------
def _validate_decoding(decoding: dict[str, Any]) -> dict[str, Any]:
    unknown = set(decoding) - DECODING_KEYS
    if unknown:
        raise GenerationRunError(
            f"decoding: unknown key(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(DECODING_KEYS))}"
        )
    stop = decoding.get("stop")
    if stop is not None and (
        not isinstance(stop, list) or not all(isinstance(s, str) for s in stop)
    ):
        raise GenerationRunError("decoding.stop must be a list of strings")
    for key in ("temperature", "top_p"):
        if decoding.get(key) is not None and not isinstance(decoding[key], (int, float)):
            raise GenerationRunError(f"decoding.{key} must be a number")
    if decoding.get("max_tokens") is not None and (
        not isinstance(decoding["max_tokens"], int) or decoding["max_tokens"] < 1
    ):
        raise GenerationRunError("decoding.max_tokens must be a positive integer")
    return decoding


def generation_run_validate(
    *,
    generator: Generator,
    variant: str | None,
    model: str | None,
    decoding: dict[str, Any] | None,
    scorers: Sequence[str] | None,
    concurrency: int,
    chunk_size: int,
) -> tuple[str, str, dict[str, Any]]:
    """Check a run's settings; returns (variant, model, full decoding) or raises
    :class:`GenerationRunError` naming the field at fault."""
    if variant is None or variant == "":
        variant = (
            generator.prompt_variant if generator.prompt_variant in gen.VARIANTS else "instruct"
        )
    if variant not in gen.VARIANTS:
        raise GenerationRunError(f"variant {variant!r}: use one of {', '.join(gen.VARIANTS)}")
    if generator.prompt_variant in gen.VARIANTS and generator.prompt_variant != variant:
        raise GenerationRunError(
            f"generator {generator.name!r} uses the {generator.prompt_variant} prompt; cannot run it with {variant}"
        )
    model = (model or generator.model or "").strip()
    if not model:
        raise GenerationRunError(f"generator {generator.name!r} has no model: pass a model name")
    if concurrency < 1 or chunk_size < 1:
        raise GenerationRunError("concurrency and chunk_size must be at least 1")
    if scorers is not None and (
        not isinstance(scorers, (list, tuple)) or not all(isinstance(x, str) for x in scorers)
    ):
        raise GenerationRunError("scorers must be a list of scorer names or dotted paths")
    try:
        sc.get_scorers(list(scorers or []) or None)
    except ValueError as exc:
        raise GenerationRunError(f"scorers: {exc}") from exc
    if decoding is not None and not isinstance(decoding, dict):
        raise GenerationRunError("decoding must be a JSON object")
    full_decoding = {**gen.decoding_defaults(variant), **_validate_decoding(dict(decoding or {}))}
    active = GenerationRun.objects.filter(
        generator=generator, status__in=GenerationRun.ACTIVE_STATUSES
    ).first()
    if active is not None:
        raise GenerationRunError(
            f"generator {generator.name!r} already has an active run (id {active.pk})"
        )
    return variant, model, full_decoding


def generation_run_create(
    *,
    generator: Generator,
    dataset: Dataset,
    topics: Iterable[Topic] = (),
    variant: str | None = None,
    model: str | None = None,
    base_url: str = "",
    api_key_env: str = "",
    backend: str = "openai",
    decoding: dict[str, Any] | None = None,
    backend_options: dict[str, Any] | None = None,
    concurrency: int = 16,
    chunk_size: int = 64,
    scorers: Sequence[str] | None = None,
    input_price_per_mtok: Decimal | float = 0,
    output_price_per_mtok: Decimal | float = 0,
    created_by=None,
    start: bool = True,
) -> GenerationRun:
    """Create a run (and start it unless ``start=False``). The generator's prompt variant and
    model are filled in from the run when the generator has none yet; a generator already tied
    to the other prompt variant is refused, so one generator's generations share one prompt."""
    topics = list(topics)
    if any(t.pk is None for t in topics):
        raise GenerationRunError("topics must be saved Topic objects")
    variant, model, full_decoding = generation_run_validate(
        generator=generator,
        variant=variant,
        model=model,
        decoding=decoding,
        scorers=scorers,
        concurrency=concurrency,
        chunk_size=chunk_size,
    )

    with transaction.atomic():
        locked = Generator.objects.select_for_update().get(pk=generator.pk)
        active = GenerationRun.objects.filter(
            generator=locked, status__in=GenerationRun.ACTIVE_STATUSES
        ).first()
        if active is not None:
            raise GenerationRunError(
                f"generator {generator.name!r} already has an active run (id {active.pk})"
            )
        changed = []
        if not locked.model:
            locked.model = model
            changed.append("model")
        if locked.prompt_variant not in gen.VARIANTS:
            locked.prompt_variant = variant
            changed.append("prompt_variant")
        if locked.backend == Generator.Backend.IMPORTED and backend in ("openai", "vllm"):
            locked.backend = backend
            changed.append("backend")
        if changed:
            locked.save(update_fields=changed)
        run = GenerationRun.objects.create(
            generator=locked,
            dataset=dataset,
            variant=variant,
            prompt_sha256=gen.prompt_sha256(variant),
            backend=backend,
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            decoding=full_decoding,
            backend_options=dict(backend_options or {}),
            concurrency=concurrency,
            chunk_size=chunk_size,
            scorers=list(scorers or []),
            input_price_per_mtok=Decimal(str(input_price_per_mtok)),
            output_price_per_mtok=Decimal(str(output_price_per_mtok)),
            created_by=created_by,
        )
        if topics:
            run.topics.set(topics)
        run.n_total = generation_run_selection(run=run).count()
        run.n_done = _done_count(run)
        run.save(update_fields=["n_total", "n_done"])
        if start:
            run = generation_run_start(run=run)
    return run


def generation_run_start(*, run: GenerationRun, enqueue: bool = True) -> GenerationRun:
    """Start or resume: a new epoch from the beginning of the selection (finished procedures are
    skipped); failures of the previous epoch are retried. The first chunk is enqueued on commit
    (``enqueue=False``: the caller drives the chunks itself, e.g. ``run_generation --inline``)."""
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run.pk)
        other = (
            GenerationRun.objects.filter(
                generator_id=run.generator_id, status__in=GenerationRun.ACTIVE_STATUSES
            )
            .exclude(pk=run.pk)
            .first()
        )
        if other is not None:
            raise GenerationRunError(
                f"generator {run.generator.name!r} already has an active run (id {other.pk})"
            )
        run.epoch += 1
        run.cursor = 0
        run.n_failed = 0
        run.errors = []
        run.cancel_requested = False
        run.status = GenerationRun.Status.RUNNING
        run.message = ""
        run.started_at = run.started_at or timezone.now()
        run.finished_at = None
        run.n_total = generation_run_selection(run=run).count()
        run.n_done = _done_count(run)
        run.save()
        run_id, epoch = run.pk, run.epoch
        if enqueue:
            _enqueue_on_commit(run_id=run_id, epoch=epoch, backend=run.backend)
    return run


def generation_run_cancel(*, run: GenerationRun) -> GenerationRun:
    """Ask a run to stop; it stops at the next chunk boundary (a pending run stops at once)."""
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run.pk)
        if run.status == GenerationRun.Status.PENDING:
            run.status = GenerationRun.Status.CANCELLED
            run.finished_at = timezone.now()
        elif run.status == GenerationRun.Status.RUNNING:
            run.cancel_requested = True
        run.save()
    return run


def _enqueue_on_commit(*, run_id: int, epoch: int, backend: str) -> None:
    """The next chunk task, sent once the transaction commits; vLLM-offline runs go to the
    ``gpu`` queue (the model lives in a GPU worker)."""
    from benchmarks.tasks import generation_run_chunk

    if backend == "vllm":
        transaction.on_commit(
            lambda: generation_run_chunk.apply_async(args=(run_id, epoch), queue=GPU_QUEUE)
        )
    else:
        transaction.on_commit(lambda: generation_run_chunk.delay(run_id, epoch))


# --- one chunk -----------------------------------------------------------------------------------
def generation_run_backend_config(*, run: GenerationRun) -> dict[str, Any]:
    return {
        **run.backend_options,
        "backend": run.backend,
        "base_url": run.base_url,
        "model": run.model,
        "api_key_env": run.api_key_env,
        "endpoint": "completions" if run.variant == "base" else "chat",
        "concurrency": run.concurrency,
    }


_BACKENDS: dict[
    str, LLMBackend
] = {}  # per process: keeps connections and rate limits across chunks
_BACKENDS_MAX = 8


def _build_backend(run: GenerationRun) -> LLMBackend:
    import json

    from benchmarks.llm.registry import build_backend

    config = generation_run_backend_config(run=run)
    key = json.dumps(config, sort_keys=True, default=str)
    backend = _BACKENDS.get(key)
    if backend is None:
        backend = build_backend(config)
        if len(_BACKENDS) >= _BACKENDS_MAX:
            old = _BACKENDS.pop(next(iter(_BACKENDS)))
            old.close()
        _BACKENDS[key] = backend
    return backend


def generation_request(*, run: GenerationRun, procedure: Procedure) -> LLMRequest:
    prompt = gen.build_prompt(
        variant=run.variant,
        goal=procedure.goal,
        resources=procedure.resources or [],
        n_steps=max(1, len(procedure.steps)),
    )
    d = run.decoding
    common = dict(
        temperature=float(d.get("temperature", 0.0)),
        max_tokens=d.get("max_tokens"),
        top_p=d.get("top_p"),
        stop=list(d.get("stop") or []) or None,
        extra=dict(d.get("extra") or {}),
    )
    if run.variant == "base":
        return LLMRequest(prompt=prompt, **common)
    return LLMRequest(messages=[{"role": "user", "content": prompt}], **common)


@dataclass
class _Outcome:
    procedure: Procedure
    generation: Generation | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str = ""


def generation_build(
    *, run: GenerationRun, procedure: Procedure, response: LLMResponse, scorers: Sequence[sc.Scorer]
) -> Generation:
    """An unsaved Generation from a response: stop applied, steps parsed, tokens counted, scored."""
    completion = gen.apply_stop(response.text or "", run.decoding.get("stop"))
    steps = gen.parse_steps(completion).steps
    gen_tokens = count_steps_tokens(steps)
    item = sc.ScoreInput(
        predicted_steps=steps,
        reference_steps=procedure.steps,
        completion=completion,
        gen_tokens=gen_tokens,
    )
    return Generation(
        procedure=procedure,
        generator_id=run.generator_id,
        model_completion=completion,
        predicted_steps=steps,
        token_count=gen_tokens,
        scores=sc.score_example(item, scorers),
    )


def generation_run_execute_chunk(
    *, run_id: int, epoch: int, backend: LLMBackend | None = None, enqueue_next: bool = True
) -> bool:
    """Generate for the next chunk of the run; True when there is a next chunk (enqueued on
    commit unless ``enqueue_next=False``)."""
    run = GenerationRun.objects.select_related("generator").get(pk=run_id)
    if run.epoch != epoch or run.status != GenerationRun.Status.RUNNING:
        return False
    if run.cancel_requested:
        _finish(
            run_id=run.pk, epoch=epoch, status=GenerationRun.Status.CANCELLED, message="cancelled"
        )
        return False
    procedures = list(
        generation_run_selection(run=run)
        .filter(pk__gt=run.cursor)
        .exclude(generations__generator_id=run.generator_id)
        .defer("source_text")
        .order_by("pk")[: run.chunk_size]
    )
    if not procedures:
        generation_run_finalize(run_id=run.pk, epoch=epoch)
        return False

    scorers = sc.get_scorers(run.scorers or None)
    outcomes: list[_Outcome] = []
    try:
        backend = backend or _build_backend(run)
    except (ValueError, LLMError) as exc:  # bad config: nothing can succeed
        _finish(
            run_id=run.pk,
            epoch=epoch,
            status=GenerationRun.Status.FAILED,
            message=f"backend: {exc}",
        )
        return False
    requests = [generation_request(run=run, procedure=p) for p in procedures]
    fatal: list[LLMError] = []
    try:
        # parse and score each reply as it arrives, while the others are in flight
        for index, result in backend.complete_iter(requests):
            procedure = procedures[index]
            if isinstance(result, LLMResponse):
                outcomes.append(
                    _Outcome(
                        procedure,
                        generation_build(
                            run=run, procedure=procedure, response=result, scorers=scorers
                        ),
                        result.prompt_tokens,
                        result.completion_tokens,
                    )
                )
            else:
                if isinstance(result, LLMError) and result.status in FATAL_STATUSES:
                    fatal.append(result)
                message = (
                    str(result)
                    if isinstance(result, LLMError)
                    else f"unexpected result {type(result).__name__}"
                )
                outcomes.append(_Outcome(procedure, None, error=message[:500]))
    except Exception as exc:
        logger.exception("generation run %s: chunk failed", run.pk)
        _store_chunk(
            run_id=run.pk, epoch=epoch, outcomes=outcomes, last_pk=run.cursor, enqueue_next=False
        )
        _finish(
            run_id=run.pk,
            epoch=epoch,
            status=GenerationRun.Status.FAILED,
            message=f"chunk failed: {type(exc).__name__}: {exc}; resume to retry",
        )
        return False
    if fatal and len(fatal) == len(outcomes):  # every request refused: bad key, model or URL
        _store_chunk(
            run_id=run.pk, epoch=epoch, outcomes=outcomes, last_pk=run.cursor, enqueue_next=False
        )
        _finish(
            run_id=run.pk,
            epoch=epoch,
            status=GenerationRun.Status.FAILED,
            message=f"the backend refused every request of a chunk: {fatal[0]}",
        )
        return False
    return _store_chunk(
        run_id=run.pk,
        epoch=epoch,
        outcomes=outcomes,
        last_pk=procedures[-1].pk,
        enqueue_next=enqueue_next,
    )


def _store_chunk(
    *, run_id: int, epoch: int, outcomes: list[_Outcome], last_pk: int, enqueue_next: bool
) -> bool:
    outcomes = sorted(outcomes, key=lambda o: o.procedure.pk)  # replies arrive in any order
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run_id)
        have = set(
            Generation.objects.filter(
                generator_id=run.generator_id, procedure_id__in=[o.procedure.pk for o in outcomes]
            ).values_list("procedure_id", flat=True)
        )
        new = [o for o in outcomes if o.generation is not None and o.procedure.pk not in have]
        Generation.objects.bulk_create([o.generation for o in new], ignore_conflicts=True)
        prompt_tokens = sum(o.prompt_tokens for o in new)
        completion_tokens = sum(o.completion_tokens for o in new)
        failed = [o for o in outcomes if o.generation is None]
        run.prompt_tokens = F("prompt_tokens") + prompt_tokens
        run.completion_tokens = F("completion_tokens") + completion_tokens
        run.cost = (
            F("cost")
            + (
                Decimal(prompt_tokens) * run.input_price_per_mtok
                + Decimal(completion_tokens) * run.output_price_per_mtok
            )
            / MTOK
        )
        current = run.epoch == epoch and run.status == GenerationRun.Status.RUNNING
        if current:
            run.cursor = last_pk
            run.n_failed = run.n_failed + len(failed)
            run.errors = (
                list(run.errors)
                + [
                    {
                        "source_example_id": o.procedure.source_example_id,
                        "procedure_id": o.procedure.pk,
                        "error": o.error,
                    }
                    for o in failed
                ]
            )[-GenerationRun.MAX_ERRORS_KEPT :]
        run.n_done = _done_count(run)
        run.save()
        if current and enqueue_next:
            _enqueue_on_commit(run_id=run_id, epoch=epoch, backend=run.backend)
    return current


def _finish(
    *, run_id: int, epoch: int, status: str, message: str, scores: dict | None = None
) -> None:
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run_id)
        if run.epoch != epoch or run.status != GenerationRun.Status.RUNNING:
            return
        run.status = status
        run.message = message
        run.cancel_requested = False
        run.finished_at = timezone.now()
        run.n_done = _done_count(run)
        if scores is not None:
            run.scores = scores
        run.save()


def generation_run_finalize(*, run_id: int, epoch: int) -> None:
    """The end of the selection: summarise the scores; completed when nothing is missing."""
    run = GenerationRun.objects.get(pk=run_id)
    summary = generation_scores_summary(
        generator=run.generator,
        procedures=generation_run_selection(run=run),
        scorer_names=run.scorers or None,
    )
    missing = run.n_total - _done_count(run)
    if missing > 0:
        _finish(
            run_id=run_id,
            epoch=epoch,
            status=GenerationRun.Status.FAILED,
            scores=summary,
            message=f"{missing} procedure(s) have no generation ({run.n_failed} request(s) failed); resume to retry",
        )
    else:
        _finish(
            run_id=run_id,
            epoch=epoch,
            status=GenerationRun.Status.COMPLETED,
            scores=summary,
            message="",
        )


# --- scores --------------------------------------------------------------------------------------
def generation_scores_summary(
    *,
    generator: Generator,
    procedures: QuerySet[Procedure] | None = None,
    scorer_names: Sequence[str] | None = None,
    refresh: bool = False,
) -> dict[str, Any]:
    """The scorer summary over a generator's generations (optionally within ``procedures``).
    Generations whose stored scores lack a key of these scorers (imported ones, older runs) are
    scored now and saved; ``refresh`` rescores all."""
    scorers = sc.get_scorers(scorer_names)
    qs = (
        Generation.objects.filter(generator=generator)
        .select_related("procedure")
        .defer("procedure__source_text")
    )
    if procedures is not None:
        qs = qs.filter(procedure__in=procedures)
    probe_keys: set[str] | None = None
    rows: list[dict[str, Any]] = []
    stale: list[Generation] = []
    for g in qs.order_by("pk").iterator(chunk_size=2000):
        if probe_keys is None:
            probe_keys = set(
                sc.score_example(
                    sc.ScoreInput(predicted_steps=["a"], reference_steps=["a"], completion="1. a"),
                    scorers,
                )
            )
        if refresh or not probe_keys <= set(g.scores or {}):
            item = sc.ScoreInput(
                predicted_steps=g.predicted_steps or [],
                reference_steps=g.procedure.steps or [],
                completion=g.model_completion or None,
                gen_tokens=g.token_count,
            )
            g.scores = {**(g.scores or {}), **sc.score_example(item, scorers)}
            if g.token_count is None:
                g.token_count = int(
                    g.scores.get("gen_tokens") or count_steps_tokens(g.predicted_steps or [])
                )
            stale.append(g)
        rows.append(g.scores)
    if stale:
        Generation.objects.bulk_update(stale, ["scores", "token_count"], batch_size=500)
    summary = sc.summarize(rows, scorers)
    summary["generator"] = generator.name
    return summary


def generation_run_execute_inline(
    *, run: GenerationRun, backend: LLMBackend | None = None, on_chunk: Any = None
) -> GenerationRun:
    """Drive a started run's chunks in this process (no Celery worker), until it stops.
    ``on_chunk(run)`` is called after each chunk (progress output)."""
    run.refresh_from_db()
    epoch = run.epoch
    while generation_run_execute_chunk(
        run_id=run.pk, epoch=epoch, backend=backend, enqueue_next=False
    ):
        if on_chunk is not None:
            run.refresh_from_db()
            on_chunk(run)
    run.refresh_from_db()
    return run
