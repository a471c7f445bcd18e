"""The database side of ``bench``: every bench run is a run of the console.

Names (so a person finds them in the console):

- dataset ``bench:<inputs file or directory name>`` @ ``<12 hex of the examples' content>``
  (judge-only: named after the generations file): the same inputs give the same dataset;
- generator ``bench:<run_name>_<generator_id>`` (the output directory's name; judge-only:
  ``bench:generations-<12 hex of the generations' content>``);
- judge ``bench:<short_model>_<judge_id>`` (the judgments directory's name).

Generation and judge runs are created by the run services
(:mod:`benchmarks.services.generation_runs`, :mod:`judging.services.runs`) and worked by
Celery like any other run (``inline``: in this process, :func:`core.runs.engine.execute_inline`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction

from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure
from benchmarks.services.generation_runs import generation_run_cancel, generation_run_create
from benchmarks.services.imports import ImportRefused, procedures_import
from benchmarks.tokens import count_steps_tokens
from benchmarks.topics import topic_name, topic_slug
from core.runs import progress
from core.versions import NOTE_MAX_CHARS
from judging import prompting
from judging.bench.config import SuiteConfig
from judging.bench.inputs import BenchExample
from judging.bench.spec import LLMSpec, ModelSpec
from judging.models import Judge, JudgeRun, Judgment, PromptVersion
from judging.services.prompt_versions import prompt_version_for_text
from judging.services.runs import judge_run_cancel, judge_run_create

CHUNK_SIZE = 64
DEFAULT_CONCURRENCY = 16


def _name(prefix: str, text: str, limit: int = 128) -> str:
    name = f"{prefix}{text}"
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: limit - 9]}~{digest}"


def content_version(examples: Iterable[BenchExample]) -> str:
    h = hashlib.sha256()
    for e in examples:
        row = [e.source_example_id, e.topic, e.goal, e.steps, e.resources, e.url, e.source_text]
        h.update(json.dumps(row, ensure_ascii=False).encode() + b"\n")
    return h.hexdigest()[:12]


# --- dataset --------------------------------------------------------------------------------
def dataset_for(*, examples: list[BenchExample], label: str) -> Dataset:
    """The dataset holding ``examples`` (imported through the procedures import service the
    first time). A topic outside the 14 of the paper is kept in the output files, not here."""
    name, version = _name("bench:", label), content_version(examples)
    ds = Dataset.objects.filter(name=name, version=version).first()
    if ds is not None and ds.procedures.count() == len(examples):
        return ds
    lines = []
    for e in examples:
        slug = topic_slug(e.topic) if e.topic else None
        lines.append(
            json.dumps(
                {
                    "source_example_id": e.source_example_id,
                    "topic": topic_name(slug) if slug else "",
                    "goal": e.goal,
                    "steps": e.steps,
                    "resources": e.resources,
                    "url": e.url,
                    "source_text": e.source_text,
                },
                ensure_ascii=False,
            )
        )
    try:
        procedures_import(dataset=name, version=version, lines=lines)
    except ImportRefused as exc:  # e.g. a goal over the import limits: say which example
        where = {i: e.where for i, e in enumerate(examples, start=1)}
        detail = [
            f"{where.get(err.line, err.line)}: {err.field}: {err.message}" for err in exc.errors
        ]
        raise ValueError("inputs refused by the procedure import:\n" + "\n".join(detail)) from exc
    ds = Dataset.objects.get(name=name, version=version)
    if not ds.description:
        Dataset.objects.filter(pk=ds.pk).update(description=f"bench inputs: {label}")
    return ds


# --- generators and generations ---------------------------------------------------------------
def backend_name(llm: LLMSpec) -> str:
    return "vllm" if llm.backend == "vllm" else "openai"


def vllm_mapping(llm: LLMSpec) -> dict[str, Any]:
    """The ``vllm:`` block as how2review's fields (``endpoint``, ``structured_output``,
    ``decoding``: ``vllm_<engine option>`` and sampling options), by the one mapping of
    :func:`benchmarks.llm.vllm_options.from_reference`."""
    from benchmarks.llm import vllm_options

    return vllm_options.from_reference(
        {
            "model": llm.model,
            "temperature": llm.temperature,
            "max_new_tokens": llm.max_new_tokens,
            "vllm": llm.vllm or {},
        }
    )


def _sampling(llm: LLMSpec) -> tuple[list[str], float | None, dict[str, Any]]:
    """(stop, top_p, other sampling options) of the ``vllm.sampling_kwargs``."""
    sampling = dict((llm.vllm or {}).get("sampling_kwargs") or {})
    stop = sampling.pop("stop", None)
    stop = [stop] if isinstance(stop, str) else list(stop or [])
    top_p = sampling.pop("top_p", None)
    return stop, top_p, sampling


def _limits(llm: LLMSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if llm.backend == "deluge" or llm.explicit_limits:
        out = {
            "requests_per_minute": llm.max_requests_per_minute,
            "tokens_per_minute": llm.max_tokens_per_minute,
        }
    return out


def generator_for(*, config: SuiteConfig, model: ModelSpec) -> Generator:
    name = _name("bench:", config.run_dir_name(model))
    generator, _ = Generator.objects.get_or_create(
        name=name,
        defaults={
            "model": model.llm.model,
            "backend": backend_name(model.llm),
            "prompt_variant": model.variant,
            "description": f"bench: {model.run_name} from {config.path}",
        },
    )
    return generator


def file_generator(records: dict[str, dict[str, Any]], *, source: str) -> Generator:
    """Judge-only: the generator of a generations file, named after its content."""
    h = hashlib.sha256()
    for ident in sorted(records):
        rec = records[ident]
        row = [ident, rec.get("predicted_steps"), rec.get("model_completion")]
        h.update(json.dumps(row, ensure_ascii=False, default=str).encode() + b"\n")
    info = next(iter(records.values()), {}).get("generator")
    model = str(info.get("model") or "") if isinstance(info, dict) else ""
    generator, _ = Generator.objects.get_or_create(
        name=f"bench:generations-{h.hexdigest()[:12]}",
        defaults={"model": model[:255], "description": f"bench judge: {source}"},
    )
    return generator


def import_generations(
    *, generator: Generator, dataset: Dataset, records: dict[str, dict[str, Any]]
) -> int:
    """Generations already in an output file but not in the database become the generator's
    (so they are never asked again); returns how many were added."""
    procedures = dict(
        Procedure.objects.filter(dataset=dataset, source_example_id__in=list(records)).values_list(
            "source_example_id", "id"
        )
    )
    have = set(
        Generation.objects.filter(
            generator=generator, procedure_id__in=list(procedures.values())
        ).values_list("procedure_id", flat=True)
    )
    new = []
    for ident, pk in procedures.items():
        if pk in have:
            continue
        rec = records[ident]
        steps = [str(s).strip() for s in rec.get("predicted_steps") or [] if str(s).strip()]
        completion = rec.get("model_completion")
        new.append(
            Generation(
                procedure_id=pk,
                generator=generator,
                model_completion=completion if isinstance(completion, str) else "",
                predicted_steps=steps,
                token_count=count_steps_tokens(steps),
            )
        )
    with transaction.atomic():
        Generation.objects.bulk_create(new, batch_size=1000, ignore_conflicts=True)
    return len(new)


def missing_generations(*, generator: Generator, dataset: Dataset) -> int:
    return (
        Procedure.objects.filter(dataset=dataset)
        .exclude(generations__generator_id=generator.pk)
        .count()
    )


def generation_run_for(
    *, model: ModelSpec, generator: Generator, dataset: Dataset, start: bool = True
) -> GenerationRun | None:
    """The generator's active run, else a new one for what is missing (None: nothing is)."""
    active = GenerationRun.objects.filter(
        generator=generator, status__in=GenerationRun.ACTIVE
    ).first()
    if active is not None:
        return active
    if not missing_generations(generator=generator, dataset=dataset):
        return None
    llm = model.llm
    stop, top_p, extra = _sampling(llm)
    if llm.reasoning_effort is not None:
        extra["reasoning_effort"] = llm.reasoning_effort
    options: dict[str, Any] = dict(_limits(llm))
    if llm.backend == "vllm":  # engine, sampling and chat options travel in the backend config
        decoding = vllm_mapping(llm)["decoding"]
        options.update(
            {k: v for k, v in decoding.items() if k not in ("temperature", "max_tokens", "top_p")}
        )
        options.pop("stop", None)
        extra = {}
    if llm.backend != "openai":  # an openai server: chat for inst, completions for base
        options["endpoint"] = llm.endpoint(default="chat")
    return generation_run_create(
        generator=generator,
        dataset=dataset,
        variant=model.variant,
        model=llm.model,
        base_url=llm.base_url,
        api_key_env=llm.api_key_env,
        backend=backend_name(llm),
        decoding={
            "temperature": llm.temperature,
            "max_tokens": llm.max_new_tokens,
            "stop": stop,  # the reference stops only where the config says (no default)
            "top_p": top_p,
            "extra": extra,
        },
        backend_options=options,
        concurrency=llm.concurrency or DEFAULT_CONCURRENCY,
        chunk_size=CHUNK_SIZE,
        start=start,
        parse_profile="reference",  # the reference's step rules: numbers compare
    )


def stored_generations(*, generator: Generator, dataset: Dataset) -> dict[str, Generation]:
    return {
        g.procedure.source_example_id: g
        for g in Generation.objects.filter(generator=generator, procedure__dataset=dataset)
        .select_related("procedure")
        .defer("procedure__source_text")
    }


# --- judges and judgments ----------------------------------------------------------------------
def judge_for(*, config: SuiteConfig) -> Judge:
    """The judge of the config's ``evaluator`` (reference parse profile when judges have one)."""
    llm = config.evaluator
    endpoint, structured = llm.endpoint(default="chat"), llm.structured_output
    if llm.backend == "vllm":
        mapped = vllm_mapping(llm)
        decoding = dict(mapped["decoding"])
        endpoint, structured = mapped["endpoint"], mapped["structured_output"]
    else:
        decoding = {"temperature": llm.temperature, "max_tokens": llm.max_new_tokens}
        _stop, top_p, extra = _sampling(llm)  # guided JSON: no stop (as the reference)
        if top_p is not None:
            decoding["top_p"] = top_p
        decoding.update(extra)
    if llm.reasoning_effort is not None:
        decoding["reasoning_effort"] = llm.reasoning_effort
    limits = _limits(llm)
    fields: dict[str, Any] = {
        "backend": backend_name(llm),
        "base_url": llm.base_url,
        "model": llm.model,
        "api_key_env": llm.api_key_env,
        "endpoint": endpoint,
        "prompt_template": config.prompts.judge_template,
        "decoding": decoding,
        "structured_output": structured,
        "concurrency": llm.concurrency or DEFAULT_CONCURRENCY,
        "requests_per_minute": limits.get("requests_per_minute"),
        "tokens_per_minute": limits.get("tokens_per_minute"),
        "parse_profile": "reference",  # strict JSON and 2 retries, as the reference
    }
    if config.prompts.judge_text is not None:  # a prompt file of its own: a new version
        fields["prompt_version"], _ = prompt_version_for_text(
            name=config.prompts.judge_template,
            text=config.prompts.judge_text,
            note=f"bench: {config.prompts.judge}"[:NOTE_MAX_CHARS],
        )
    else:
        fields["prompt_version"] = PromptVersion.objects.shipped(config.prompts.judge_template)
    name = _name("bench:", config.judge_dir_name())
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        judge = Judge(name=name, **fields)
        judge.full_clean()
        judge.save()
    elif any(getattr(judge, k) != v for k, v in fields.items()):
        for key, value in fields.items():
            setattr(judge, key, value)
        judge.full_clean()
        judge.save()
    return judge


def judge_run_for(*, judge: Judge, generation_ids: list[int], start: bool = True):
    """The judge's active run, else a new run over ``generation_ids`` (None: none to judge)."""
    active = JudgeRun.objects.filter(judge=judge, status__in=JudgeRun.ACTIVE).first()
    if active is not None:
        return active
    if not generation_ids:
        return None
    return judge_run_create(
        judge=judge, selection={"generation_ids": sorted(generation_ids)}, enqueue=start
    )


def stored_judgments(*, judge: Judge, generations: Iterable[Generation]) -> dict[int, Judgment]:
    """The judge's judgment of each generation (by what it sees: goal, reference and candidate
    steps), by generation id."""
    by_hash: dict[str, list[int]] = {}
    for g in generations:
        h = prompting.content_hash(
            goal=g.procedure.goal, reference_steps=g.procedure.steps, steps=g.predicted_steps
        )
        by_hash.setdefault(h, []).append(g.pk)
    out: dict[int, Judgment] = {}
    hashes = list(by_hash)
    for start in range(0, len(hashes), 5000):
        for j in Judgment.objects.filter(
            judge_key=judge.judge_id, content_hash__in=hashes[start : start + 5000]
        ):
            for gid in by_hash[j.content_hash]:
                out[gid] = j
    return out


# --- waiting --------------------------------------------------------------------------------
def wait(
    run, *, inline: bool = False, on_progress: Callable[[Any], None] | None = None, poll_s=0.5
):
    """Until ``run`` stops (worked here with ``inline``); Ctrl-C cancels it (core.runs.progress)."""
    cancel = generation_run_cancel if isinstance(run, GenerationRun) else judge_run_cancel
    return progress.wait(
        run,
        inline=inline,
        on_progress=on_progress,
        poll_s=poll_s,
        cancel=lambda r: cancel(run=r),
    )
