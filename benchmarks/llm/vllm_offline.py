"""vLLM offline backend (``vllm.LLM`` in this process; GPU workers, the ``gpu`` extra).

``vllm`` is imported lazily, on first use: this module imports anywhere; using the backend
without vLLM installed fails with an :class:`LLMError` saying so. One ``vllm.LLM`` per
(model, engine options) is kept per process, so a GPU Celery worker loads a model once.

Config keys::

    {"backend": "vllm", "model": "/models/how2judge-8b" (a local path or a name vLLM resolves),
     "endpoint": "chat" | "completions",
     "vllm_tensor_parallel_size": 1, "vllm_gpu_memory_utilization": 0.9, "vllm_max_model_len": 16384,
     "vllm_dtype": "auto", "vllm_seed": 0, "vllm_enforce_eager": false}

Structured output: ``SamplingParams(structured_outputs=StructuredOutputsParams(json=schema))``
(vLLM >= 0.12; the old ``GuidedDecodingParams`` is gone).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from benchmarks.llm.base import Capabilities, LLMBackend, LLMError, LLMRequest, LLMResponse

_ENGINES: dict[tuple, Any] = {}
_ENGINES_LOCK = threading.Lock()
ENGINE_KEYS = (
    "tensor_parallel_size",
    "gpu_memory_utilization",
    "max_model_len",
    "dtype",
    "seed",
    "enforce_eager",
    "trust_remote_code",
    "download_dir",
    "max_num_seqs",
)


def _vllm():
    try:
        import vllm
        from vllm.sampling_params import StructuredOutputsParams
    except ImportError as exc:
        raise LLMError(
            f"vLLM offline backend needs vllm (pip install '.[gpu]'): {exc}", retryable=False
        ) from exc
    return vllm, StructuredOutputsParams


class VLLMOfflineBackend(LLMBackend):
    name = "vllm"
    capabilities = Capabilities(structured_output=True, logprobs=True, batch=True, gpu_worker=True)
    BATCH = 1024  # requests per engine call in complete_iter (the engine schedules within it)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.endpoint: str = config.get("endpoint") or "chat"
        if self.endpoint not in ("chat", "completions"):
            raise ValueError(
                f"vllm backend config: endpoint must be 'chat' or 'completions', not {self.endpoint!r}"
            )
        self.structured_output: bool = bool(config.get("structured_output", True))
        self.engine_kwargs = {
            k: config[f"vllm_{k}"] for k in ENGINE_KEYS if config.get(f"vllm_{k}") is not None
        }

    @property
    def llm(self):
        key = (self.model, tuple(sorted(self.engine_kwargs.items())))
        with _ENGINES_LOCK:
            if key not in _ENGINES:
                vllm, _ = _vllm()
                _ENGINES[key] = vllm.LLM(model=self.model, **self.engine_kwargs)
            return _ENGINES[key]

    def sampling_params(self, request: LLMRequest):
        vllm, StructuredOutputsParams = _vllm()
        kwargs: dict[str, Any] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.top_p is not None:
            kwargs["top_p"] = request.top_p
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.json_schema is not None and self.structured_output:
            kwargs["structured_outputs"] = StructuredOutputsParams(json=request.json_schema)
        if "seed" in request.extra:
            kwargs["seed"] = request.extra["seed"]
        return vllm.SamplingParams(**kwargs)

    def _messages(self, request: LLMRequest) -> list[dict[str, str]]:
        if request.messages is not None:
            return request.messages
        return [{"role": "user", "content": request.prompt or ""}]

    def _prompt(self, request: LLMRequest) -> str:
        if request.prompt is not None:
            return request.prompt
        return "\n\n".join(m.get("content", "") for m in request.messages or [])

    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResponse | LLMError]]:
        """Slices of :attr:`BATCH` requests through :meth:`complete_many`; ``should_stop`` is
        polled between slices."""
        iterator = iter(requests)
        index = 0
        while not (should_stop is not None and should_stop()):
            batch = list(islice(iterator, self.BATCH))
            if not batch:
                return
            for offset, result in enumerate(self.complete_many(batch)):
                yield index + offset, result
            index += len(batch)

    def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResponse | LLMError]:
        """All requests in one ``generate``/``chat`` call (vLLM batches them itself)."""
        if not requests:
            return []
        started = time.perf_counter()
        try:
            params = [self.sampling_params(r) for r in requests]
            if self.endpoint == "chat":
                outputs = self.llm.chat(
                    [self._messages(r) for r in requests], sampling_params=params, use_tqdm=False
                )
            else:
                outputs = self.llm.generate(
                    [self._prompt(r) for r in requests], sampling_params=params, use_tqdm=False
                )
        except LLMError as exc:
            return [exc for _ in requests]
        except Exception as exc:  # noqa: BLE001 - one failure for the whole batch, never a raise
            err = LLMError(f"vLLM {self.model}: {type(exc).__name__}: {exc}", retryable=False)
            return [err for _ in requests]
        elapsed = time.perf_counter() - started
        results: list[LLMResponse | LLMError] = []
        for out in outputs:
            first = out.outputs[0] if out.outputs else None
            if first is None:
                results.append(LLMError(f"vLLM {self.model}: no output", retryable=False))
                continue
            results.append(
                LLMResponse(
                    text=first.text,
                    prompt_tokens=len(out.prompt_token_ids or []),
                    completion_tokens=len(first.token_ids or []),
                    finish_reason=first.finish_reason,
                    latency_s=elapsed / len(requests),
                    model=self.model,
                )
            )
        return results
