"""``bench validate | gen | judge | run | leaderboard``: the reference's stages on
how2review's runs. The output files are written from the stored rows once a run is done;
ids already in an output file are skipped (generation: never asked again; judging: not
judged again), so an interrupted command is resumed by running it again."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from benchmarks import generation as gen
from core.runs.progress import Progress
from judging.bench import layout as lay
from judging.bench import outputs as out
from judging.bench import store
from judging.bench.config import SuiteConfig, file_sha256, load_suite_config
from judging.bench.inputs import BenchExample, load_examples
from judging.bench.spec import LLMSpec, ModelSpec

KEY_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")


class BenchError(RuntimeError):
    """A stage that could not finish (runs failed or were cancelled); what finished is written."""


@dataclass
class Options:
    wait: bool = True
    inline: bool = False
    stream: TextIO = field(default_factory=lambda: sys.stdout)


@dataclass
class Outcome:
    """What one stage left undone (for the command's exit status)."""

    problems: list[str] = field(default_factory=list)
    launched: list[str] = field(default_factory=list)


def _say(opts: Options, text: str) -> None:
    opts.stream.write(text + "\n")
    opts.stream.flush()


def _finish(run, label: str, opts: Options, outcome: Outcome) -> bool:
    """Wait for ``run`` (unless ``--no-wait``); False when the stage must stop here."""
    if not opts.wait and not opts.inline:
        outcome.launched.append(f"{label}: {type(run).__name__} {run.pk} queued")
        _say(opts, f"  launched {type(run).__name__} {run.pk} (not waiting)")
        return False
    run = store.wait(run, inline=opts.inline, on_progress=Progress(label, opts.stream))
    if run.status != "done":
        outcome.problems.append(
            f"{label}: {type(run).__name__} {run.pk} ended {run.status}: {run.error or ''}".strip()
        )
    return True


# --- validate -------------------------------------------------------------------------------
def _env_problems(llm: LLMSpec, key: str) -> list[str]:
    if llm.backend == "vllm" or not llm.api_key_env or os.environ.get(llm.api_key_env):
        return []
    return [f"{key}: the environment variable {llm.api_key_env} (api_key_env) is not set"]


def validate(path: str | Path, opts: Options) -> tuple[SuiteConfig, list[str]]:
    """Check the config, the inputs and the keys' variables without calling a model; returns
    the config and the problems found (empty: valid)."""
    config = load_suite_config(path)
    problems: list[str] = []
    for m in config.models:
        problems += _env_problems(m.llm, f"models[{m.index}]")
    problems += _env_problems(config.evaluator, "evaluator")
    n_examples = 0
    if config.models:
        try:
            n_examples = len(load_examples(config.inputs))
        except ValueError as exc:
            problems += [str(line) for line in getattr(exc, "lines", [str(exc)])]
    problems = [p if p.startswith("/") else f"{config.path}: {p}" for p in problems]
    for w in config.warnings:
        _say(opts, f"warning: {w}")
    _say(opts, f"config: {config.path}")
    _say(opts, f"out_root: {config.out_root}")
    if config.models:
        _say(opts, f"inputs: {config.inputs.path} ({n_examples} examples)")
    for m in config.models:
        _say(
            opts,
            f"model {m.index}: {m.llm.model} ({m.prompt_style}, {m.llm.backend}) → "
            f"{config.out_root / config.run_dir_name(m)}",
        )
    if not config.models:
        source = lay.judge_only_layout(config).generations
        found = f"{len(lay.records_by_id(source))} records" if source.exists() else "not found yet"
        _say(opts, f"judge-only: generations {source} ({found})")
    ev = config.evaluator
    origin = "" if config.evaluator_given else " (default How2Judge)"
    _say(opts, f"evaluator: {ev.model} ({ev.backend}){origin} → {config.judge_dir_name()}")
    if any(m.llm.backend == "vllm" for m in config.models) or ev.backend == "vllm":
        _say(opts, "note: vLLM runs go to the gpu queue: start a GPU worker (-Q gpu) to work them")
    return config, problems


# --- generation -----------------------------------------------------------------------------
def _inputs_label(config: SuiteConfig) -> str:
    return config.inputs.path.name if config.inputs.path else "inputs"


def _gen_manifest(
    config: SuiteConfig, model: ModelSpec, generator_name: str, run_pk: int | None
) -> dict[str, Any]:
    prompt = config.prompts.generation_path(model.prompt_style)
    return {
        "generator_id": config.generator_id(model),
        "generation_prompt_sha256": file_sha256(prompt),
        "generation_prompt_path": str(config.prompts.nominal_generation(model.prompt_style)),
        "generation": {"model_type": model.prompt_style},
        "generator": out.llm_manifest(model.llm, generator=True),
        "how2review": {
            "generator": generator_name,
            "generation_run": run_pk,
            "prompt_file": str(prompt),
        },
    }


def generate_model(
    config: SuiteConfig, model: ModelSpec, examples: list[BenchExample], opts: Options, outcome
) -> lay.RunLayout:
    layout = lay.model_layout(config, model)
    _say(opts, f"\n▶ how2bench / Generate: {model.llm.model} ({model.prompt_style})")
    _say(opts, f"  out: {layout.root}")
    dataset = store.dataset_for(examples=examples, label=_inputs_label(config))
    generator = store.generator_for(config=config, model=model)
    in_file = lay.records_by_id(layout.generations)
    wanted = {e.source_example_id for e in examples}
    store.import_generations(
        generator=generator,
        dataset=dataset,
        records={k: v for k, v in in_file.items() if k in wanted},
    )
    if in_file:
        _say(opts, f"  existing: {len(wanted & set(in_file))}/{len(examples)}")
    run = store.generation_run_for(
        model=model, generator=generator, dataset=dataset, start=not opts.inline
    )
    lay.write_json(
        layout.generation_manifest,
        _gen_manifest(config, model, generator.name, run.pk if run else None),
    )
    if run is not None and not _finish(run, "bench/generate", opts, outcome):
        return layout
    stored = store.stored_generations(generator=generator, dataset=dataset)
    prompt_sha = file_sha256(config.prompts.generation_path(model.prompt_style))
    generator_id = config.generator_id(model)
    records = []
    for e in examples:
        g = stored.get(e.source_example_id)
        if e.source_example_id in in_file or g is None:
            continue
        prompt = gen.build_prompt(
            variant=model.variant, goal=e.goal, resources=e.resources, n_steps=max(1, len(e.steps))
        )
        records.append(
            out.generation_record(
                generator_id=generator_id,
                prompt_sha256=prompt_sha,
                example=e,
                model_completion=g.model_completion,
                predicted_steps=g.predicted_steps,
                prompt=prompt,
                generator=model.llm.info(),
            )
        )
    lay.append_jsonl(layout.generations, records)
    missing = len(wanted - set(in_file) - set(stored))
    _say(opts, f"  wrote: {layout.generations} (+{len(records)})")
    if missing:
        outcome.problems.append(f"{model.run_name}: {missing} example(s) have no generation yet")
    return layout


# --- judging --------------------------------------------------------------------------------
def _judge_manifest(config: SuiteConfig, judge, run_pk: int | None) -> dict[str, Any]:
    return {
        "judge_id": config.judge_id(),
        "judge_prompt_sha256": file_sha256(config.prompts.judge),
        "judge_prompt_path": str(config.prompts.nominal_judge()),
        "judge": out.llm_manifest(config.evaluator, generator=False),
        "how2review": {
            "judge": judge.name,
            "judge_run": run_pk,
            "prompt_template": judge.prompt_template,
            "prompt_version": judge.prompt_version.number if judge.prompt_version else None,
            "prompt_file": str(config.prompts.judge),
        },
    }


def layout_source(config: SuiteConfig) -> Path:
    return lay.judge_only_layout(config).generations


def _judge_only_source(config: SuiteConfig, records: dict[str, dict[str, Any]]):
    """Judge-only: the generations file's examples and generations, in the database."""
    items = {k: out.judge_input(r) for k, r in records.items()}
    examples = [
        BenchExample(
            source_example_id=k,
            topic=i["topic"],
            goal=i["goal"],
            steps=i["steps"],
            resources=i["resources"],
        )
        for k, i in items.items()
        if i is not None
    ]
    dataset = store.dataset_for(examples=examples, label=layout_source(config).name)
    generator = store.file_generator(records, source=str(layout_source(config)))
    store.import_generations(generator=generator, dataset=dataset, records=records)
    return dataset, generator


def judge_layout(
    config: SuiteConfig, layout: lay.RunLayout, opts: Options, outcome: Outcome, source=None
) -> dict[str, Any] | None:
    """Judge the generations file of ``layout`` (``source``: its dataset and generator; else
    they are made from the file), append the new judgments, write the aggregates."""
    _say(opts, f"\n▶ how2bench / Judge: {config.evaluator.model}")
    records = lay.records_by_id(layout.generations)
    if not records:
        _say(opts, f"  skip: no generations in {layout.generations}")
        return None
    dataset, generator = source or _judge_only_source(config, records)
    done = lay.existing_ids(layout.judgments)
    if done:
        _say(opts, f"  existing: {len(done & set(records))}/{len(records)}")
    todo = {
        k: item
        for k in sorted(records)
        if k not in done and (item := out.judge_input(records[k])) is not None
    }
    judge = store.judge_for(config=config)
    stored = store.stored_generations(generator=generator, dataset=dataset)
    gens = [stored[k] for k in todo if k in stored]
    known = store.stored_judgments(judge=judge, generations=gens)
    # not in the file: judged again if unjudged, or if the stored verdict is a parse failure
    pending = [g.pk for g in gens if g.pk not in known or known[g.pk].parse_failed]
    run = None
    for _ in range(2):  # an earlier command's active run first, then one for what is left
        run = store.judge_run_for(judge=judge, generation_ids=pending, start=not opts.inline)
        lay.write_json(
            layout.judge_manifest, _judge_manifest(config, judge, run.pk if run else None)
        )
        if run is None:
            break
        if not _finish(run, "bench/judge", opts, outcome):
            return None
        known = store.stored_judgments(judge=judge, generations=gens)
        pending = [g.pk for g in gens if g.pk not in known]
        if not pending:
            break
    prompt_sha = file_sha256(config.prompts.judge)
    judge_id = config.judge_id()
    new = []
    for k, item in todo.items():
        g = stored.get(k)
        j = known.get(g.pk) if g is not None else None
        if j is None:
            continue
        new.append(
            out.judgment_record(
                judge_id=judge_id,
                prompt_sha256=prompt_sha,
                item=item,
                judge=config.evaluator.info(),
                parse_failed=j.parse_failed,
                reasoning=j.reasoning,
                critical_failures=j.critical_failures,
            )
        )
    lay.append_jsonl(layout.judgments, new)
    _say(opts, f"  wrote: {layout.judgments} (+{len(new)})")
    n_parse_failed = sum(1 for r in new if r["parse_failed"])
    if n_parse_failed:
        _say(opts, f"  warning: {n_parse_failed} example(s) had unparseable judge output")
    if len(new) < len(todo):
        outcome.problems.append(f"{layout.root.name}: {len(todo) - len(new)} item(s) not judged")
    summary = out.write_aggregates(
        judgments=layout.judgments, summary_path=layout.summary, by_topic_path=layout.by_topic
    )
    _say(opts, f"  how2score: {summary['how2score_percent']:.1f}%  (n={summary['n_examples']})")
    return summary


# --- the stages -----------------------------------------------------------------------------
def _need_models(config: SuiteConfig) -> None:
    if not config.models:
        raise BenchError(f"{config.path}: models: no models configured; add entries to `models:`")


def stage_gen(config: SuiteConfig, opts: Options) -> Outcome:
    _need_models(config)
    outcome = Outcome()
    examples = load_examples(config.inputs)
    for model in config.models:
        generate_model(config, model, examples, opts, outcome)
    return outcome


def stage_judge(config: SuiteConfig, opts: Options) -> Outcome:
    outcome = Outcome()
    judge_layout(config, lay.judge_only_layout(config), opts, outcome)
    return outcome


def stage_run(config: SuiteConfig, opts: Options) -> tuple[Outcome, list[dict[str, Any]]]:
    _need_models(config)
    outcome = Outcome()
    examples = load_examples(config.inputs)
    results = []
    for model in config.models:
        layout = generate_model(config, model, examples, opts, outcome)
        manifest = {"suite": str(config.path), "model": asdict(model), "out": str(layout.root)}
        out.write_pipeline_manifest(layout.pipeline_manifest, status="started", config=manifest)
        if outcome.launched:
            continue
        dataset = store.dataset_for(examples=examples, label=_inputs_label(config))
        generator = store.generator_for(config=config, model=model)
        summary = judge_layout(config, layout, opts, outcome, source=(dataset, generator))
        status = "completed" if summary is not None and not outcome.launched else "started"
        out.write_pipeline_manifest(layout.pipeline_manifest, status=status, config=manifest)
        results.append(
            {
                "generator_model": model.llm.model,
                "run_name": model.run_name,
                "generator_id": config.generator_id(model),
                "prompt_style": model.prompt_style,
                "how2score": (summary or {}).get("how2score_percent", 0.0),
                "n_examples": (summary or {}).get("n_examples", 0),
            }
        )
    return outcome, results
