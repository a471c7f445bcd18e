"""The LongProc segment analysis on real vLLM (the CPU build, the session's tiny random model):
the vLLM offline engine in this process and vLLM's OpenAI-compatible server. What is checked is
that the gold prefix really was prefilled: the prompt the engine (or the server) tokenised is the
chat template's open assistant turn ending with the prefix (no end-of-turn after it), and the
reply is what greedy decoding continues from exactly that text, built here by hand.

vLLM is required here: ``make test`` installs its CPU build; without it these tests fail."""

from __future__ import annotations

import pytest

from benchmarks.llm import vllm_offline
from benchmarks.llm.registry import build_backend
from benchmarks.services.longproc_segments import segment_analysis, segment_requests
from tests.benchmarks.llm.test_prefill import RECORD, ROUTE
from tests.benchmarks.llm.vllm_support import TINY_ENGINE, require_vllm

pytestmark = pytest.mark.usefixtures("vllm_engine_closed_after")

TOKENS = 24  # a short budget: random weights write noise, only the prefix matters here
RECORD_SHORT = {**RECORD, "level": TOKENS}  # a level may be a number of tokens


@pytest.fixture(scope="module")
def vllm_engine_closed_after():
    require_vllm()
    yield
    vllm_offline.shutdown_engine()


def _open_turn(prompt: str, prefix: str) -> str:
    """The tiny model's ChatML with the assistant turn left open after the prefix, its last
    newline kept (what continue_final_message renders with a template that keeps spacing)."""
    return f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n{prefix}"


def _greedy(llm, text: str) -> tuple[int, str]:
    from vllm import SamplingParams

    ids = llm.get_tokenizer().encode(text, add_special_tokens=False)
    params = SamplingParams(temperature=0.0, max_tokens=TOKENS)
    out = llm.generate([{"prompt_token_ids": ids}], sampling_params=params, use_tqdm=False)[0]
    return len(ids), out.outputs[0].text


def test_offline_engine_continues_the_gold_prefix(tiny_model_dir):
    backend = build_backend({"backend": "vllm", "model": str(tiny_model_dir), **TINY_ENGINE})
    result = segment_analysis(
        backend=backend, task="path-traversal", records=[RECORD_SHORT], buffer=0
    )
    assert result.refused == [] and [r["n"] for r in result.table] == [1, 1, 1, 1]
    _, requests = segment_requests(backend=backend, task="path-traversal", record=RECORD_SHORT)
    prompt = requests[0][1].messages[0]["content"]
    tokenizer = backend.llm.get_tokenizer()
    for row, (prefix, request) in zip(result.rows, requests, strict=True):
        assert row["error"] is None and row["prefix"] == prefix
        seen = tokenizer.decode(backend.prompt_token_ids(tokenizer, request))
        if row["segment"] == 1:
            assert prefix == "" and seen.endswith("<|im_start|>assistant\n")
            continue
        assert prefix.startswith("<Route>\n" + ROUTE[0]) and prefix.endswith(".\n")
        assert seen == _open_turn(prompt, prefix)  # ends with the gold, the turn left open
        n_ids, expected = _greedy(backend.llm, _open_turn(prompt, prefix))
        assert (row["prompt_tokens"], row["output"]) == (n_ids, expected)
        assert row["completion_tokens"] > 0 and row["score"] in (0.0, 1.0)
    # the same request without the prefill is another prompt: the prefix was not ignored
    assert len({r["prompt_tokens"] for r in result.rows}) == 4


def test_vllm_server_continues_the_gold_prefix(vllm_server, tiny_model_dir):
    served = {
        "backend": "openai",
        "base_url": vllm_server.base_url,
        "model": vllm_server.model,
        "prefill": True,
        "timeout_s": 120,
        "max_retries": 1,
    }
    result = segment_analysis(
        backend=served, task="path-traversal", records=[RECORD_SHORT], buffer=0
    )
    assert [r["error"] for r in result.rows] == [None] * 4
    offline = build_backend({"backend": "vllm", "model": str(tiny_model_dir), **TINY_ENGINE})
    _, requests = segment_requests(backend=offline, task="path-traversal", record=RECORD_SHORT)
    prompt = requests[0][1].messages[0]["content"]
    for row in result.rows[1:]:  # the server tokenised the open turn ending with the gold
        n_ids, expected = _greedy(offline.llm, _open_turn(prompt, row["prefix"]))
        assert row["prompt_tokens"] == n_ids
        assert row["output"] == expected
