"""Suite configs: the reference's shapes load and validate unchanged; every error names the
key and the file; defaults and ids as the reference computes them."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from judging.bench.config import load_suite_config
from judging.bench.spec import DATASET_ENV, BenchConfigError

CONFIGS = Path(__file__).resolve().parent / "configs"


def _bench_file(tmp_path: Path) -> Path:
    path = tmp_path / "how2bench.jsonl"
    rec = {"source_example_id": "x1", "topic": "Health", "goal": "Stay well.", "steps": ["Sleep."]}
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return path


def test_reference_api_only_config_loads_with_the_reference_defaults(tmp_path):
    config = load_suite_config(CONFIGS / "reference_api_only.yaml", base_dir=tmp_path)
    assert config.out_root == tmp_path / "out" / "how2bench"
    assert [m.run_name for m in config.models] == [
        "gpt-4.1",
        "gpt-5",
        "olmo3-1025-7b",
        "qwen3-8b-with-thinking",
    ]
    gpt41, gpt5, olmo, qwen = config.models
    assert (gpt41.llm.backend, gpt41.llm.provider, gpt41.prompt_style) == (
        "deluge",
        "openai",
        "inst",
    )
    assert gpt41.llm.base_url == "https://api.openai.com/v1"
    assert gpt41.llm.api_key_env == "OPENAI_API_KEY"
    assert (gpt41.llm.temperature, gpt41.llm.max_new_tokens) == (0.0, 4096)
    assert (gpt41.llm.max_requests_per_minute, gpt41.llm.max_tokens_per_minute) == (1000, 100000)
    assert gpt5.llm.reasoning_effort == "minimal"
    assert (olmo.llm.backend, olmo.llm.provider, olmo.llm.endpoint(default="x")) == (
        "vllm",
        "local",
        "completions",  # vLLM's default mode is generate
    )
    assert olmo.llm.vllm["sampling_kwargs"]["stop"] == ["\n\n"]
    assert qwen.llm.temperature == 0.6 and qwen.llm.endpoint(default="x") == "chat"
    ev = config.evaluator
    assert (ev.model, ev.temperature, ev.max_new_tokens, config.evaluator_given) == (
        "gpt-5",
        1.0,
        8192,
        True,
    )
    assert config.judge_dir_name() == f"gpt-5_{config.judge_id()}"
    assert len(config.judge_id()) == 12 and len(config.generator_id(gpt41)) == 12
    assert config.warnings == []


def test_omitted_evaluator_is_the_how2judge_on_vllm(tmp_path, monkeypatch):
    monkeypatch.setenv(DATASET_ENV, str(_bench_file(tmp_path)))
    config = load_suite_config(CONFIGS / "reference_default_judge.yaml", base_dir=tmp_path)
    ev = config.evaluator
    assert (ev.backend, ev.provider, ev.model) == ("vllm", "local", "how2everything/how2judge")
    assert (ev.temperature, ev.max_new_tokens) == (0.0, 4096)
    assert ev.vllm == {"chat_template_kwargs": {"enable_thinking": False}}
    assert config.evaluator_given is False
    assert config.judge_dir_name().startswith("how2judge_")
    assert config.inputs.path == tmp_path / "how2bench.jsonl"


def test_ids_change_with_what_decides_the_outputs(tmp_path):
    base = (CONFIGS / "reference_api_only.yaml").read_text()
    a = load_suite_config(CONFIGS / "reference_api_only.yaml", base_dir=tmp_path)
    changed = tmp_path / "changed.yaml"
    changed.write_text(base.replace("  temperature: 0.0\n", "  temperature: 0.2\n", 1))
    b = load_suite_config(changed, base_dir=tmp_path)
    assert a.generator_id(a.models[0]) != b.generator_id(b.models[0])
    assert a.judge_id() == b.judge_id()  # the evaluator did not change
    again = load_suite_config(CONFIGS / "reference_api_only.yaml", base_dir=tmp_path)
    assert [again.run_dir_name(m) for m in again.models] == [a.run_dir_name(m) for m in a.models]


def test_reference_configs_validate_unchanged(tmp_path, monkeypatch, db):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(DATASET_ENV, str(_bench_file(tmp_path)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    for name in ("reference_api_only.yaml", "reference_default_judge.yaml"):
        out = StringIO()
        call_command("bench", "validate", "--config", str(CONFIGS / name), stdout=out)
        assert out.getvalue().rstrip().endswith("valid"), out.getvalue()
        assert "(1 examples)" in out.getvalue()
    out = StringIO()
    call_command(
        "bench", "validate", "--config", str(CONFIGS / "reference_judge_existing.yaml"), stdout=out
    )
    assert "valid" in out.getvalue()


def test_validate_names_a_missing_key_variable_and_missing_inputs(tmp_path, monkeypatch, db):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv(DATASET_ENV, raising=False)
    with pytest.raises(CommandError) as exc:
        call_command(
            "bench",
            "validate",
            "--config",
            str(CONFIGS / "reference_api_only.yaml"),
            stdout=StringIO(),
        )
    text = str(exc.value)
    where = CONFIGS / "reference_api_only.yaml"
    assert (
        f"{where}: models[0]: the environment variable OPENAI_API_KEY (api_key_env) is not set"
        in text
    )
    assert f"{where}: evaluator: the environment variable OPENAI_API_KEY" in text
    assert f"{where}: inputs.path: not set" in text and DATASET_ENV in text


BAD = [
    ("models: []\n", "out_root", "is required"),
    (
        "out_root: o\nmodels:\n  - model: m\n    prompt_style: chatty\n",
        "models[0].prompt_style",
        "'base' or 'inst'",
    ),
    (
        "out_root: o\nmodels:\n  - model: m\n    prompt_style: inst\n    backend: hf\n",
        "models[0].backend",
        "deluge, vllm, openai",
    ),
    (
        "out_root: o\nmodels:\n  - model: m\n    prompt_style: inst\n",
        "models[0].provider",
        "required with backend: deluge",
    ),
    (
        "out_root: o\nmodels:\n  - model: m\n    prompt_style: inst\n    backend: openai\n",
        "models[0].base_url",
        "required with backend: openai",
    ),
    (
        "out_root: o\nmodels:\n  - {model: m, prompt_style: base, backend: vllm, vllm: {engine: 1}}\n",
        "models[0].vllm.engine",
        "unknown key; known: mode",
    ),
    (
        "out_root: o\nmodels:\n  - {model: m, prompt_style: base, backend: vllm, vllm: {mode: batch}}\n",
        "models[0].vllm.mode",
        "'generate' or 'chat'",
    ),
    (
        "out_root: o\nmodels:\n  - {model: m, prompt_style: inst, backend: openai, base_url: u, temperature: hot}\n",
        "models[0].temperature",
        "must be a number",
    ),
    (
        "out_root: o\nmodels:\n  - {model: m, prompt_style: inst, backend: openai, base_url: u, api_key_env: sk-123}\n",
        "models[0].api_key_env",
        "NAME of an environment variable",
    ),
    (
        "out_root: o\nevaluator: {backend: deluge, model: gpt-4.1}\n",
        "evaluator.provider",
        "required with backend: deluge",
    ),
    ("out_root: o\nevaluator: judge\n", "evaluator", "must be a mapping"),
    (
        "out_root: o\ninputs: {path: x.jsonl, kind: raw}\n",
        "inputs.kind",
        "auto, how2mine_export, bench",
    ),
    (
        "out_root: o\ninputs: {path: x.jsonl, compression: lz4}\n",
        "inputs.compression",
        "must be one of",
    ),
    (
        "out_root: o\ninputs: {path: x, include_globs: '*.jsonl'}\n",
        "inputs.include_globs",
        "list of glob",
    ),
    ("out_root: o\ngenerations_root: g\n", "generations_root", "no longer supported"),
    ("out_root: o\nprompts: {judge: missing.txt}\n", "prompts.judge", "file not found"),
    ("out_root: o\npaths: {generations: 3}\n", "paths.generations", "non-empty string"),
]


@pytest.mark.parametrize(("text", "key", "message"), BAD, ids=[k for _, k, _ in BAD])
def test_config_errors_name_the_key_and_the_file(tmp_path, text, key, message):
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    with pytest.raises(BenchConfigError) as exc:
        load_suite_config(path, base_dir=tmp_path)
    assert any(
        line.startswith(f"{path}: {key}: ") and message in line for line in exc.value.lines
    ), exc.value.lines


def test_every_problem_is_reported_at_once_and_yaml_errors_give_the_line(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("models:\n  - model: m\n    prompt_style: x\nevaluator: 3\n")
    with pytest.raises(BenchConfigError) as exc:
        load_suite_config(path, base_dir=tmp_path)
    keys = [line.split(": ")[1] for line in exc.value.lines]
    assert keys == ["out_root", "models[0].prompt_style", "evaluator"]
    path.write_text("out_root: o\nmodels: [\n")
    with pytest.raises(BenchConfigError) as exc:
        load_suite_config(path, base_dir=tmp_path)
    assert str(path) in str(exc.value) and "not valid YAML" in str(exc.value)
    assert "line 3" in str(exc.value)


def test_any_judge_prompt_file_is_accepted_one_that_cannot_be_rendered_is_not(tmp_path):
    from judging import prompting

    same = tmp_path / "judge.txt"
    same.write_text(prompting.load_template(prompting.DEFAULT_TEMPLATE), encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(f"out_root: o\nprompts: {{judge: {same}}}\n")
    config = load_suite_config(path, base_dir=tmp_path)
    assert config.prompts.judge == same and config.prompts.judge_template == "judge_h3"
    assert config.prompts.judge_text is None  # the shipped text: its version 1
    # another text, as the reference: run as a new version of the H.3 prompt
    same.write_text("Judge {goal} {reference_steps} {steps}\x07\n")
    config = load_suite_config(path, base_dir=tmp_path)
    assert config.prompts.judge_text == "Judge {goal} {reference_steps} {steps}\n"
    assert config.prompts.judge_template == "judge_h3"
    assert any("prompts.judge" in w and "line 1" in w for w in config.warnings), config.warnings
    same.write_text("Judge {goal} {candidate}\n")  # a placeholder nothing fills
    with pytest.raises(BenchConfigError) as exc:
        load_suite_config(path, base_dir=tmp_path)
    assert f"{path}: prompts.judge: {same}: unknown placeholder(s) {{candidate}}" in str(exc.value)


def test_unknown_keys_are_warnings_naming_them(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(
        "out_root: o\nextra_key: 1\nmodels:\n  - {model: m, prompt_style: inst, backend: openai, "
        "base_url: 'http://x/v1', temprature: 0.5}\n"
    )
    config = load_suite_config(path, base_dir=tmp_path)
    assert f"{path}: extra_key: unknown key, ignored (as the reference does)" in config.warnings
    assert any(w.startswith(f"{path}: models[0].temprature: unknown key") for w in config.warnings)


def test_ids_equal_the_reference_implementations():
    """Golden values: the output directory names the reference's own code
    (lilakk/how2everything, how2everything/bench/config.py) computes for these configs when run
    from /tmp/refcheck/run (the judge id hashes the prompt's path, as the reference does)."""
    base = Path("/tmp/refcheck/run")
    api = load_suite_config(CONFIGS / "reference_api_only.yaml", base_dir=base)
    assert [api.run_dir_name(m) for m in api.models] == [
        "gpt-4.1_0167f07a71c4",
        "gpt-5_f01a5cd70af4",
        "olmo3-1025-7b_00453eef82ac",
        "qwen3-8b-with-thinking_d514d74d5c62",
    ]
    assert api.judge_dir_name() == "gpt-5_fdeb1500d97f"
    default = load_suite_config(CONFIGS / "reference_default_judge.yaml", base_dir=base)
    assert default.judge_dir_name() == "how2judge_d9952ed026e3"
    existing = load_suite_config(CONFIGS / "reference_judge_existing.yaml", base_dir=base)
    assert existing.judge_dir_name() == "gpt-4.1_f34173c3b503"
