"""How a suite config becomes how2review's rows: the reference's ``vllm:`` blocks mapped onto
the vLLM offline backend's config, the default How2Judge, names a person finds in the console,
``--inline`` (no Celery worker) and ``--no-wait`` + cancel from the console."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from benchmarks.models import Dataset, Generation, GenerationRun
from benchmarks.services.generation_runs import generation_run_cancel
from judging.bench import store
from judging.bench.config import load_suite_config
from judging.bench.inputs import load_examples
from judging.bench.spec import Inputs
from judging.models import Judge
from tests.support.worker import wait_for

CONFIGS = Path(__file__).resolve().parent / "configs"


def _inputs(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "mini.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "source_example_id": f"m-{i}",
                    "topic": "Health",
                    "goal": f"Goal m-{i}.",
                    "steps": ["a.", "b."],
                    "resources": [],
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


def test_vllm_models_and_the_default_judge_map_onto_the_vllm_backend(tmp_path, db):
    config = load_suite_config(CONFIGS / "reference_api_only.yaml", base_dir=tmp_path)
    object.__setattr__(config, "inputs", type(config.inputs)(path=_inputs(tmp_path)))
    examples = load_examples(config.inputs)
    dataset = store.dataset_for(examples=examples, label="mini.jsonl")
    assert (dataset.name, dataset.version) == ("bench:mini.jsonl", store.content_version(examples))
    assert store.dataset_for(examples=examples, label="mini.jsonl").pk == dataset.pk  # reused
    assert dataset.procedures.count() == 3

    olmo, qwen = config.models[2], config.models[3]
    gen = store.generator_for(config=config, model=olmo)
    assert gen.name == f"bench:{config.run_dir_name(olmo)}" and gen.prompt_variant == "base"
    run = store.generation_run_for(model=olmo, generator=gen, dataset=dataset, start=False)
    assert (run.backend, run.variant, run.parse_profile) == ("vllm", "base", "reference")
    assert run.backend_options["endpoint"] == "completions"  # vLLM's default mode: generate
    assert run.backend_options["vllm_revision"] == "stage1-step566000"
    assert run.decoding["stop"] == ["\n\n"] and run.decoding["max_tokens"] == 4096
    generation_run_cancel(run=run)

    gen_q = store.generator_for(config=config, model=qwen)
    run_q = store.generation_run_for(model=qwen, generator=gen_q, dataset=dataset, start=False)
    assert run_q.backend_options["endpoint"] == "chat"
    assert (run_q.backend_options["top_k"], run_q.backend_options["min_p"]) == (20, 0.0)
    assert (run_q.decoding["temperature"], run_q.decoding["top_p"]) == (0.6, 0.95)
    assert run_q.decoding["stop"] == []  # no stop unless the config sets one (not "\n\n")

    gpt5 = config.models[1]
    gen5 = store.generator_for(config=config, model=gpt5)
    run5 = store.generation_run_for(model=gpt5, generator=gen5, dataset=dataset, start=False)
    assert (run5.backend, run5.base_url, run5.api_key_env) == (
        "openai",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
    )
    assert run5.decoding["extra"] == {"reasoning_effort": "minimal"}
    assert run5.backend_options == {
        "requests_per_minute": 1000,
        "tokens_per_minute": 100000,
        "endpoint": "chat",
    }

    default = load_suite_config(CONFIGS / "reference_default_judge.yaml", base_dir=tmp_path)
    judge = store.judge_for(config=default)
    assert judge.name == f"bench:{default.judge_dir_name()}"
    assert (judge.backend, judge.model, judge.endpoint) == (
        "vllm",
        "how2everything/how2judge",
        "completions",
    )
    assert judge.decoding["chat_template_kwargs"] == {"enable_thinking": False}
    assert (judge.decoding["temperature"], judge.decoding["max_tokens"]) == (0.0, 4096)
    assert judge.structured_output is True and judge.parse_profile == "reference"
    assert store.judge_for(config=default).pk == judge.pk  # the same config: the same judge
    assert Judge.objects.filter(name__startswith="bench:").count() == 1


@pytest.mark.django_db(transaction=True)
def test_inline_runs_in_this_process_without_a_worker(tmp_path, llm_server):
    llm_server.responder = lambda req: (
        '{"reasoning": "ok", "critical_failures": []}'
        if "critical failures" in req.prompt_text
        else "1. First.\n2. Second."
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"out_root: {tmp_path / 'out'}\n"
        f"inputs: {{path: {_inputs(tmp_path)}}}\n"
        f"models:\n  - {{model: g, prompt_style: base, backend: openai, base_url: '{llm_server.base_url}'}}\n"
        f"evaluator: {{model: j, backend: openai, base_url: '{llm_server.base_url}'}}\n"
    )
    out = StringIO()
    call_command("bench", "run", "--config", str(suite), "--inline", stdout=out)
    assert "how2score: 100.0%  (n=3)" in out.getvalue()
    assert len(llm_server.requests) == 6
    gen_requests = [r for r in llm_server.requests if r.kind == "completions"]
    assert len(gen_requests) == 3  # base prompt style on an openai server: completions
    assert GenerationRun.objects.get().status == "done"


@pytest.mark.worker
def test_no_wait_launches_a_console_run_that_can_be_cancelled_then_resumed(
    celery_worker_process, llm_server, tmp_path, admin_client
):
    llm_server.responder = lambda req: "1. Only step."
    llm_server.latency_s = 0.4
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"out_root: {tmp_path / 'out'}\n"
        f"inputs: {{path: {_inputs(tmp_path, n=8)}}}\n"
        f"models:\n  - {{model: g, prompt_style: inst, backend: openai, concurrency: 1, "
        f"base_url: '{llm_server.base_url}'}}\n"
    )
    out = StringIO()
    call_command("bench", "gen", "--config", str(suite), "--no-wait", stdout=out)
    assert "launched GenerationRun" in out.getvalue()
    run = GenerationRun.objects.get()
    page = admin_client.get(reverse("admin:benchmarks_generationrun_changelist"))
    assert page.status_code == 200 and run.generator.name in page.content.decode()
    wait_for(lambda: Generation.objects.count() >= 1, timeout=30, message="a first generation")
    generation_run_cancel(run=run)
    wait_for(
        lambda: GenerationRun.objects.get(pk=run.pk).status == "cancelled",
        timeout=30,
        message="the run to be cancelled",
    )
    stored = Generation.objects.count()
    assert 1 <= stored < 8

    llm_server.latency_s = 0
    call_command("bench", "gen", "--config", str(suite), stdout=StringIO())
    config = load_suite_config(suite)
    lines = (
        (config.out_root / config.run_dir_name(config.models[0]) / "generations.jsonl")
        .read_text()
        .splitlines()
    )
    assert [json.loads(x)["source_example_id"] for x in lines] == [f"m-{i}" for i in range(8)]
    assert GenerationRun.objects.count() == 2 and Dataset.objects.count() == 1
    # what the cancelled run stored was not asked again
    assert len(llm_server.requests) == 8


def test_inputs_the_procedure_import_refuses_are_named_by_file_and_line(tmp_path, db):
    path = tmp_path / "long.jsonl"
    rows = [
        {"source_example_id": "ok", "goal": "Short.", "steps": ["a."]},
        {"source_example_id": "long", "goal": "x" * 2001, "steps": ["a."]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    examples = load_examples(Inputs(path=path))
    with pytest.raises(ValueError) as exc:
        store.dataset_for(examples=examples, label="long.jsonl")
    assert f"{path}:2: goal: is too long" in str(exc.value)
    assert not Dataset.objects.exists()  # nothing half-written
