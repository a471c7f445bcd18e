"""vLLM's batch runner (``python -m vllm.entrypoints.openai.run_batch``) on the CPU build with
the tiny model: the same JSONL as a provider's Batch API, a prompt of the H.3 judge's length
(~13K characters), results parsed by custom_id, routed to the gpu queue."""

from __future__ import annotations

import json

from benchmarks.llm.base import LLMRequest, LLMResponse
from benchmarks.llm.batch import OpenAIBatchBackend
from benchmarks.llm.registry import build_backend, queue_for
from benchmarks.llm.vllm_batch import VLLMBatchBackend, request_line
from judging.prompting import DEFAULT_TEMPLATE, load_template, render_judge_prompt
from tests.benchmarks.llm.vllm_support import require_vllm

ARGS = ["--max-model-len", "8192", "--dtype", "float32", "--enforce-eager"]


def test_the_runner_answers_a_jsonl_of_requests_on_the_tiny_model(tiny_model_dir):
    require_vllm()
    config = {
        "backend": "vllm-batch",
        "model": str(tiny_model_dir),
        "concurrency": 8,
        "vllm_batch_args": ARGS,
    }
    backend = build_backend(config)
    assert isinstance(backend, VLLMBatchBackend) and queue_for(config) == "gpu"
    h3 = render_judge_prompt(
        template=load_template(DEFAULT_TEMPLATE),
        goal="Make tea",
        reference_steps=["Boil water.", "Steep the tea."],
        steps=["Boil water.", "Add the tea bag and wait three minutes."],
    )
    assert 12000 <= len(h3) <= 16000
    requests = [
        LLMRequest(messages=[{"role": "user", "content": h3}], max_tokens=6),
        LLMRequest(messages=[{"role": "user", "content": "hello"}], max_tokens=4),
        LLMRequest(messages=[{"role": "user", "content": "bye"}], max_tokens=5),
    ]
    # the same body a provider's Batch API gets (apart from the model name)
    mine = json.loads(request_line("1", requests[1], model="m"))
    provider = OpenAIBatchBackend(
        {"backend": "openai-batch", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    )
    theirs = json.loads(provider.line("1", requests[1]))
    assert mine == theirs
    results = backend.complete_many(requests)
    assert all(isinstance(r, LLMResponse) for r in results), results
    assert [r.completion_tokens for r in results] == [6, 4, 5]  # random weights run to max
    assert results[0].prompt_tokens > 1000 > results[1].prompt_tokens > 0
