"""Generation runs: validate, create, start (or resume) and cancel. The work itself — one
chunk of procedures at a time — is :class:`benchmarks.services.generation_execution.
GenerationRunExecutor`'s, driven by the run engine (:mod:`core.runs.engine`), which holds the
lease, the status, the enqueueing (vLLM-offline runs on the ``gpu`` queue), cancel and resume.

A run walks the procedures of its selection in id order, ``chunk_size`` at a time. A procedure
that already has a generation by the run's generator is never asked again (the unique
constraint on (procedure, generator) backs that up), so resuming — a new attempt from the
beginning of the selection — picks up only what is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet, Sum

from benchmarks import generation as gen
from benchmarks import scorers as sc
from benchmarks.llm.batch import price_factor
from benchmarks.llm.preflight import preflight_error
from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure, Topic
from benchmarks.packs.protocols import DEFAULT_PROTOCOL, ProtocolError, get_protocol
from benchmarks.services.generation_protocols import protocol_check
from core.runs import engine
from core.runs.engine import RunStateError
from core.secrets import llm_config_errors

DECODING_KEYS = {"temperature", "max_tokens", "stop", "top_p", "extra"}
MTOK = Decimal(1_000_000)  # prices are per million tokens


class GenerationRunError(ValueError):
    """A run that cannot be created, started or cancelled, with a message naming what is
    wrong."""


# --- selection -----------------------------------------------------------------------------
def generation_run_selection(*, run: GenerationRun) -> QuerySet[Procedure]:
    qs = Procedure.objects.filter(dataset_id=run.dataset_id)
    topic_ids = list(run.topics.values_list("pk", flat=True))
    if topic_ids:
        qs = qs.filter(topic_id__in=topic_ids)
    return qs


def generation_run_counts(*, run: GenerationRun, cursor: int) -> dict[str, Any]:
    """The run's counters, counted from rows: procedures in the selection (``n_total``), those
    with a generation by the generator (``n_done``) and those of this attempt — up to
    ``cursor`` — still without one (``n_failed``: asked, and failed for good); the tokens of
    the generations this run asked for (``Generation.run``) and their cost at the run's
    prices."""
    selection = generation_run_selection(run=run)
    missing = selection.exclude(generations__generator_id=run.generator_id)
    n_total = selection.count()
    spent = Generation.objects.filter(run=run).aggregate(
        prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens")
    )
    prompt_tokens, completion_tokens = spent["prompt"] or 0, spent["completion"] or 0
    return {
        "n_total": n_total,
        "n_done": n_total - missing.count(),
        "n_failed": missing.filter(pk__lte=cursor).count() if cursor else 0,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost": (
            Decimal(prompt_tokens) * run.input_price_per_mtok
            + Decimal(completion_tokens) * run.output_price_per_mtok
        )
        * price_factor(run.backend_options or {})  # the batch rate in batch mode
        / MTOK,
    }


def _other_active_run(*, generator: Generator, exclude_pk: int | None = None) -> None:
    others = GenerationRun.objects.filter(generator=generator, status__in=GenerationRun.ACTIVE)
    if exclude_pk is not None:
        others = others.exclude(pk=exclude_pk)
    other = others.first()
    if other is not None:
        raise GenerationRunError(
            f"generator {generator.name!r} already has an active run (id {other.pk})"
        )


# --- validate / create ----------------------------------------------------------------------
def _validate_decoding(decoding: dict[str, Any]) -> dict[str, Any]:
    unknown = set(decoding) - DECODING_KEYS
    if unknown:
        raise GenerationRunError(
            f"decoding: unknown key(s) {', '.join(sorted(unknown))}; "
            f"allowed: {', '.join(sorted(DECODING_KEYS))}"
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
    protocol: str = DEFAULT_PROTOCOL,
) -> tuple[str, str, dict[str, Any]]:
    """Check a run's settings; returns (variant, model, full decoding) or raises
    :class:`GenerationRunError` naming the field at fault. Under a paper's ``protocol`` the
    variant is instruct (chat prompts) and the decoding defaults are greedy with no
    ``max_tokens``: the protocol's budget applies unless the run names one."""
    try:
        paper = get_protocol(protocol or DEFAULT_PROTOCOL)
    except ProtocolError as exc:
        raise GenerationRunError(str(exc)) from exc
    if paper is not None and variant in (None, ""):
        variant = "instruct"
    if variant is None or variant == "":
        variant = (
            generator.prompt_variant if generator.prompt_variant in gen.VARIANTS else "instruct"
        )
    if variant not in gen.VARIANTS:
        raise GenerationRunError(f"variant {variant!r}: use one of {', '.join(gen.VARIANTS)}")
    if generator.prompt_variant in gen.VARIANTS and generator.prompt_variant != variant:
        raise GenerationRunError(
            f"generator {generator.name!r} uses the {generator.prompt_variant} prompt; "
            f"cannot run it with {variant}"
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
    defaults = gen.decoding_defaults(variant) if paper is None else {"temperature": 0.0, "stop": []}
    full_decoding = {**defaults, **_validate_decoding(dict(decoding or {}))}
    _other_active_run(generator=generator)
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
    parse_profile: str = gen.DEFAULT_PARSE_PROFILE,
    protocol: str = DEFAULT_PROTOCOL,
    protocol_options: dict[str, Any] | None = None,
) -> GenerationRun:
    """Create a run, queued; its first chunk is enqueued on commit unless ``start=False`` (then
    :func:`generation_run_start` launches it, or ``engine.execute_inline`` works it here). The
    generator's prompt variant and model are filled in from the run when the generator has none
    yet; a generator already tied to the other prompt variant is refused, so one generator's
    generations share one prompt. ``protocol`` (a scorer pack's paper, see
    :mod:`benchmarks.packs.protocols`) and its ``protocol_options`` are checked against every
    item of the selection, naming the first one the prompt cannot be built from."""
    topics = list(topics)
    if any(t.pk is None for t in topics):
        raise GenerationRunError("topics must be saved Topic objects")
    if parse_profile not in gen.PARSE_PROFILES:
        raise GenerationRunError(
            f"parse_profile {parse_profile!r}: use one of {', '.join(gen.PARSE_PROFILES)}"
        )

    secret_errors = llm_config_errors(api_key_env=api_key_env, base_url=base_url)
    if secret_errors:  # secrets by name only (core.secrets): console, API and CLI alike
        raise GenerationRunError("; ".join(f"{k}: {v}" for k, v in secret_errors.items()))
    variant, model, full_decoding = generation_run_validate(
        generator=generator,
        variant=variant,
        model=model,
        decoding=decoding,
        scorers=scorers,
        concurrency=concurrency,
        chunk_size=chunk_size,
        protocol=protocol,
    )
    protocol = protocol or DEFAULT_PROTOCOL
    selection = Procedure.objects.filter(dataset=dataset)
    if topics:
        selection = selection.filter(topic__in=topics)
    try:
        protocol_options, variant = protocol_check(
            protocol=protocol,
            options=protocol_options,
            variant=variant,
            backend_config={**dict(backend_options or {}), "backend": backend},
            procedures=selection,
        )
    except ProtocolError as exc:
        raise GenerationRunError(str(exc)) from exc
    paper = get_protocol(protocol)
    if start:
        _launch_check(
            {
                **dict(backend_options or {}),
                "backend": backend,
                "base_url": base_url,
                "model": model,
                "api_key_env": api_key_env,
            }
        )

    with transaction.atomic():
        locked = Generator.objects.select_for_update().get(pk=generator.pk)
        _other_active_run(generator=locked)
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
            protocol=protocol,
            protocol_options=protocol_options,
            prompt_sha256=gen.prompt_sha256(variant) if paper is None else paper.prompt_sha256(),
            backend=backend,
            base_url=base_url,
            model=model,
            api_key_env=api_key_env,
            decoding=full_decoding,
            parse_profile=parse_profile,
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
        counts = generation_run_counts(run=run, cursor=0)
        GenerationRun.objects.filter(pk=run.pk).update(**counts)
        for field, value in counts.items():
            setattr(run, field, value)
        if start:
            engine.launch(run)
    return run


# --- start / resume / cancel -----------------------------------------------------------------
def _launch_check(config: dict[str, Any]) -> None:
    """Refuse to hand a run to the workers when its API key variable is unset or its server
    does not serve its model (:mod:`benchmarks.llm.preflight`), naming why."""
    reason = preflight_error(config)
    if reason:
        raise GenerationRunError(f"cannot launch: {reason}")


def generation_run_start(
    *, run: GenerationRun, enqueue: bool = True, force: bool = False
) -> GenerationRun:
    """Start or resume a run (``engine.resume``): a new attempt from the beginning of the
    selection (finished procedures are skipped), retrying the previous attempt's failures. A
    run whose worker is alive is refused unless ``force`` (take over: its worker is known to
    be gone). The first chunk is enqueued on commit (``enqueue=False``: the caller works the
    run itself, ``engine.execute_inline``). A done run has nothing to resume."""
    with transaction.atomic():
        generator = Generator.objects.select_for_update().get(pk=run.generator_id)
        _other_active_run(generator=generator, exclude_pk=run.pk)
        try:
            resumed = engine.resume(run, force=force, enqueue=enqueue)
        except RunStateError as exc:
            raise GenerationRunError(str(exc)) from exc
        if enqueue:  # refused: the transaction (and the enqueue on commit) is rolled back
            _launch_check(
                {
                    **run.backend_options,
                    "backend": run.backend,
                    "base_url": run.base_url,
                    "model": run.model,
                    "api_key_env": run.api_key_env,
                }
            )
        return resumed


def generation_run_failures(*, run: GenerationRun) -> dict[str, Any]:
    """What a finished run could not generate: procedures of its selection without a generation
    by its generator (``missing``: requests that failed for good) and generations with no step
    (``empty``: a reply nothing could be parsed from), split into those that may be asked again
    and those in use by a judge run or a study (``in_use``: kept, never deleted here)."""
    selection = generation_run_selection(run=run)
    empty = Generation.objects.filter(
        generator_id=run.generator_id, procedure__in=selection, predicted_steps=[]
    )
    in_use = empty.filter(Q(judge_run_items__isnull=False) | Q(study_items__isnull=False))
    return {
        "missing": selection.exclude(generations__generator_id=run.generator_id).count(),
        "empty": empty.exclude(pk__in=in_use.values("pk")),
        "in_use": in_use.distinct().count(),
    }


def generation_run_rerun_failures(*, run: GenerationRun, enqueue: bool = True) -> GenerationRun:
    """Work again only what a done or failed run could not generate (see
    :func:`generation_run_failures`): the empty generations are deleted and, with the missing
    procedures, asked again by a new attempt (``engine.resume``, the judge runs' mechanism);
    every other generation is kept. A cancelled run is resumed instead
    (:func:`generation_run_start`)."""
    if run.status not in (GenerationRun.Status.DONE, GenerationRun.Status.FAILED):
        raise GenerationRunError(
            f"run {run.pk} is {run.status}: only a done or failed run re-runs its failures"
            + (" (resume a cancelled one)" if run.status == GenerationRun.Status.CANCELLED else "")
        )
    with transaction.atomic():
        generator = Generator.objects.select_for_update().get(pk=run.generator_id)
        _other_active_run(generator=generator, exclude_pk=run.pk)
        failures = generation_run_failures(run=run)
        n_empty = failures["empty"].count()
        if not (n_empty or failures["missing"]):
            kept = f" ({failures['in_use']} empty one(s) are in use and kept)"
            raise GenerationRunError(
                f"run {run.pk} has no failures to re-run" + (kept if failures["in_use"] else "")
            )
        failures["empty"].delete()
        try:
            resumed = engine.resume(run, enqueue=enqueue, done_too=True)
        except RunStateError as exc:
            raise GenerationRunError(str(exc)) from exc
        if enqueue:  # refused: the transaction (deletes included) is rolled back
            _launch_check(
                {
                    **run.backend_options,
                    "backend": run.backend,
                    "base_url": run.base_url,
                    "model": run.model,
                    "api_key_env": run.api_key_env,
                }
            )
        return resumed


def generation_run_cancel(*, run: GenerationRun) -> GenerationRun:
    """Stop a run: a queued (or orphaned) run is cancelled at once; a running one becomes
    ``cancelling`` and its worker stops after storing what is in flight."""
    try:
        return engine.cancel(run)
    except RunStateError as exc:
        raise GenerationRunError(str(exc)) from exc
