"""vLLM's batch runner on a GPU box: the same JSONL as a provider's Batch API
(:mod:`benchmarks.llm.batch`), run by ``python -m vllm.entrypoints.openai.run_batch -i
requests.jsonl -o results.jsonl --model …`` in a subprocess of a GPU worker (the ``gpu`` queue),
its output file parsed like a provider's.

Config::

    {"backend": "vllm-batch", "model": "/models/qwen3-8b",   # what --model loads
     "concurrency": 4096,             # requests per runner call (one engine start per call)
     "vllm_batch_args": ["--max-model-len", "16384"],        # more runner arguments
     "vllm_batch_timeout_s": 86400}

Each ``complete_iter`` call takes ``concurrency`` requests at a time (what a run's backpressure
lets it hold), writes them to a JSONL, runs the runner once and yields every result; the engine
starts and stops with the subprocess, so nothing is left behind in the worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from benchmarks.llm.base import Capabilities, LLMBackend, LLMError, LLMRequest, LLMResult
from benchmarks.llm.batch import NotRun, parse_output


def request_line(custom_id: str, request: LLMRequest, *, model: str) -> str:
    """One line of the runner's input: an OpenAI chat-completions body with its custom_id."""
    body: dict[str, Any] = {
        "model": model,
        "messages": request.messages or [{"role": "user", "content": request.prompt or ""}],
        "temperature": request.temperature,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.stop:
        body["stop"] = list(request.stop)
    if request.json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": request.json_schema_name, "schema": request.json_schema},
        }
    body.update(request.extra)
    entry = {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}
    return json.dumps(entry, ensure_ascii=False) + "\n"


class VLLMBatchBackend(LLMBackend):
    name = "vllm-batch"
    mode = "batch"
    capabilities = Capabilities(structured_output=True, batch=True, gpu_worker=True)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.args = [str(a) for a in config.get("vllm_batch_args") or []]
        self.timeout_s = float(config.get("vllm_batch_timeout_s") or 86400)

    def run_file(self, lines: list[str]) -> dict[str, LLMResult | NotRun]:
        """Run one input file through the runner; results by custom_id."""
        with tempfile.TemporaryDirectory(prefix="vllm-batch-") as folder:
            src, out = Path(folder) / "requests.jsonl", Path(folder) / "results.jsonl"
            src.write_text("".join(lines), encoding="utf-8")
            command = [sys.executable, "-m", "vllm.entrypoints.openai.run_batch"]
            command += ["-i", str(src), "-o", str(out), "--model", self.model, *self.args]
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=self.timeout_s, check=False
                )
            except subprocess.TimeoutExpired as exc:
                raise LLMError(
                    f"vLLM batch runner: over {self.timeout_s:.0f} s", retryable=True
                ) from exc
            if done.returncode != 0 or not out.exists():
                tail = (done.stderr or done.stdout or "")[-1500:]
                raise LLMError(
                    f"vLLM batch runner exited with {done.returncode}: {tail}", retryable=False
                )
            return parse_output(out.read_text(encoding="utf-8"))

    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        iterator = enumerate(requests)
        while not (should_stop is not None and should_stop()):
            chunk = list(islice(iterator, self.limits.concurrency))
            if not chunk:
                return
            lines = [request_line(str(i), r, model=self.model) for i, r in chunk]
            try:
                results = self.run_file(lines)
            except LLMError as exc:
                results = {str(i): exc for i, _ in chunk}
            for i, _ in chunk:
                result = results.get(str(i)) or LLMError("no result line", retryable=True)
                if isinstance(result, NotRun):
                    result = LLMError(f"not run: {result.reason}", retryable=True)
                yield i, result
