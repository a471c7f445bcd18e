"""A process that has used PPI (ppi_py, hence numba and llvmlite) still loads a vLLM engine.

vLLM's CPU platform scans every module for Triton kernels while loading; llvmlite's library
wrapper answered ``__dict__`` with a function wrapper and the load failed with
``'_lib_fn_wrapper' object has no attribute 'get'`` (see benchmarks.llm.vllm_compat). This test
computes a PPI estimate first, as a worker that scored a study would, then loads the tiny model
in the same process and asks it something."""

from __future__ import annotations

import sys

import pytest

from benchmarks.llm import vllm_compat, vllm_offline
from benchmarks.llm.base import LLMRequest, LLMResponse
from benchmarks.llm.registry import build_backend
from tests.benchmarks.llm.vllm_support import TINY_ENGINE, require_vllm
from validation.ppi.stats import classical


@pytest.fixture
def engine_closed_after():
    require_vllm()
    yield
    vllm_offline.shutdown_engine()


def test_an_engine_loads_and_answers_after_ppi_loaded_numba(tiny_model_dir, engine_closed_after):
    result = classical([0, 1, 1, 0, 1])
    assert result["n"] == 5 and result["how2score"] == pytest.approx(0.4)
    assert "llvmlite.binding.ffi" in sys.modules  # ppi_py brought numba and llvmlite in
    ffi = sys.modules["llvmlite.binding.ffi"]

    backend = build_backend({"backend": "vllm", "model": str(tiny_model_dir), **TINY_ENGINE})
    out = backend.complete_many([LLMRequest(prompt="Steps:", max_tokens=3)])
    assert isinstance(out[0], LLMResponse) and out[0].completion_tokens == 3

    # llvmlite's wrapper now refuses dunder names as ctypes.CDLL does, and still works
    assert not hasattr(ffi.lib, "__dict__")
    assert vllm_compat.make_llvmlite_scan_safe() is False  # already done: idempotent
    import numba

    assert numba.njit(lambda x: x * 2)(21) == 42
