"""The vLLM offline backend behind the backend interface. Without vllm installed only the
lazy import and the clear error are checked; with it, the sampling parameters."""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks.llm.base import LLMError, LLMRequest
from benchmarks.llm.registry import build_backend
from judging.prompting import JUDGE_SCHEMA

HAS_VLLM = importlib.util.find_spec("vllm") is not None


def test_backend_builds_from_config_without_loading_a_model():
    backend = build_backend(
        {
            "backend": "vllm",
            "model": "/models/tiny",
            "vllm_max_model_len": 4096,
            "vllm_tensor_parallel_size": 1,
        }
    )
    assert backend.engine_kwargs == {"max_model_len": 4096, "tensor_parallel_size": 1}
    with pytest.raises(ValueError, match="endpoint"):
        build_backend({"backend": "vllm", "model": "m", "endpoint": "embeddings"})


@pytest.mark.skipif(HAS_VLLM, reason="vllm is installed: the error path does not apply")
def test_without_vllm_every_request_fails_clearly():
    backend = build_backend({"backend": "vllm", "model": "/models/tiny"})
    results = backend.complete_many([LLMRequest(prompt="x"), LLMRequest(prompt="y")])
    assert all(isinstance(r, LLMError) and "pip install '.[gpu]'" in str(r) for r in results)
    with pytest.raises(LLMError):
        backend.complete(LLMRequest(prompt="x"))


@pytest.mark.skipif(not HAS_VLLM, reason="vllm not installed (the gpu extra)")
def test_sampling_params_with_structured_outputs():
    backend = build_backend({"backend": "vllm", "model": "/models/tiny"})
    params = backend.sampling_params(
        LLMRequest(prompt="x", max_tokens=64, stop=["\n\n"], json_schema=JUDGE_SCHEMA)
    )
    assert params.max_tokens == 64 and params.temperature == 0.0 and params.stop == ["\n\n"]
    assert params.structured_outputs.json == JUDGE_SCHEMA
