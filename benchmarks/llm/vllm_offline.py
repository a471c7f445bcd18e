"""vLLM offline backend: ``vllm.LLM`` in this process (GPU Celery workers on the ``gpu`` queue,
``celery -A config worker -Q gpu -c 1``; the ``gpu`` extra, or the CPU build in tests).

``vllm`` is imported lazily, on first use: this module imports anywhere; using the backend
without vLLM installed fails with an :class:`LLMError` saying so.

**One engine per process.** The engine lives in a process-wide slot (:func:`engine_for`):
work asking for the same model and engine options reuses it; work asking for another model or
other engine options first shuts the held engine down and frees its memory (engine core
shutdown, distributed state torn down, garbage collected, CUDA cache emptied, freed heap given
back to the system), then loads the new one. :func:`shutdown_engine` is connected to Celery's
``worker_process_shutdown`` and ``worker_shutdown`` signals, so a worker closes its engine when
it stops. An engine that cannot be loaded (missing directory, bad option, out of memory) raises
:class:`EngineLoadError` from ``complete_iter``/``complete_many`` — the run engine fails the run
with that reason — and leaves the slot empty, so the worker goes on serving other runs.

**Config keys** (a judge's ``decoding``, a generation run's ``backend_options``, a mining
stage's config; all checked by :func:`benchmarks.llm.vllm_options.errors`)::

    {"backend": "vllm", "model": "/models/how2judge" (a local directory, or an id vLLM resolves),
     "endpoint": "chat" | "completions",
     "vllm_revision", "vllm_tokenizer", "vllm_dtype", "vllm_max_model_len",
     "vllm_gpu_memory_utilization", "vllm_tensor_parallel_size", "vllm_quantization",
     "vllm_enforce_eager", "vllm_seed", "vllm_trust_remote_code", "vllm_download_dir",
     "vllm_max_num_seqs", "vllm_structured_outputs_config": {"backend": "guidance", ...},
     "top_k", "min_p", "seed", "repetition_penalty", ... (sampling defaults for every request),
     "chat_template_kwargs": {"enable_thinking": false}, "chat_template", "add_generation_prompt",
     "structured_output": true}

**The reference implementation's ``vllm:`` section** (``lilakk/how2everything``, an evaluator or
generator with ``backend: vllm``) is accepted as it is, under the key ``"vllm"``, and maps so:

    ============================  =============================================================
    reference                     this backend
    ============================  =============================================================
    ``model``                     ``model`` (a local directory; nothing is fetched at run time
                                  when ``HF_HUB_OFFLINE=1``)
    ``temperature``               the request's temperature (a judge's ``decoding.temperature``)
    ``max_new_tokens``            ``max_tokens``
    ``vllm.mode``                 ``endpoint``: ``generate`` → ``completions`` (``LLM.generate``
                                  on the raw prompt), ``chat`` → ``chat`` (``LLM.chat``)
    ``vllm.engine_kwargs.K``      ``vllm_K`` (any ``vllm.LLM`` option; the ones above checked)
    ``vllm.sampling_kwargs.K``    ``K`` (``SamplingParams`` option; a request's own value wins)
    ``vllm.chat_template_kwargs`` ``chat_template_kwargs`` (passed to the chat template)
    ``vllm.chat_template[_path]`` ``chat_template`` (the template text)
    ``vllm.add_generation_prompt`` ``add_generation_prompt``
    ``vllm.require_guided_json``  ``structured_output``
    ``vllm.hf_token_env``,        accepted and not used (weights come from disk; set
    ``worker_multiproc_method``   ``VLLM_WORKER_MULTIPROC_METHOD`` in the worker's environment)
    ============================  =============================================================

:func:`benchmarks.llm.vllm_options.from_reference` does this mapping for a whole entry and
returns ``{"model", "endpoint", "structured_output", "decoding"}`` (flat keys), which is what
``manage.py bench`` uses to make a judge from a suite config.

Prompts are tokenized once, here (the chat template applied with ``chat_template_kwargs``), and
given to the engine as token ids; a prompt longer than the engine's ``max_model_len`` gets an
:class:`LLMError` saying so (that item is marked, the others are generated).
Structured output: ``SamplingParams(structured_outputs=StructuredOutputsParams(json=schema))``.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from benchmarks.llm import vllm_compat, vllm_options
from benchmarks.llm.base import Capabilities, LLMBackend, LLMError, LLMRequest, LLMResponse

logger = logging.getLogger(__name__)

# request.extra keys that are SamplingParams options
SAMPLING_EXTRA = ("top_k", "min_p", "seed", "repetition_penalty", "presence_penalty")
SAMPLING_EXTRA += ("frequency_penalty",)


class EngineLoadError(LLMError):
    """The engine could not be loaded: nothing this backend is asked can succeed."""


def _vllm():
    try:
        import vllm
        from vllm.sampling_params import StructuredOutputsParams
    except ImportError as exc:
        raise LLMError(
            f"vLLM offline backend needs vllm (pip install '.[gpu]'): {exc}", retryable=False
        ) from exc
    return vllm, StructuredOutputsParams


# --- the one engine of this process ---------------------------------------------------------


class _EngineSlot:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.key: tuple | None = None
        self.llm: Any = None
        self.loads = 0  # engines loaded by this process (tests read it)

    def get(self, model: str, kwargs: dict[str, Any]) -> Any:
        key = (model, json.dumps(kwargs, sort_keys=True, default=str))
        with self.lock:
            if self.llm is not None and self.key == key:
                return self.llm
            self.close()
            self.llm = self._load(model, kwargs)
            self.key = key
            self.loads += 1
            return self.llm

    def _load(self, model: str, kwargs: dict[str, Any]) -> Any:
        vllm, _ = _vllm()
        local = os.path.isabs(model) or model.startswith((".", "~"))
        if local and not os.path.isdir(os.path.expanduser(model)):
            raise EngineLoadError(f"vLLM: model directory not found: {model}")
        vllm_compat.make_llvmlite_scan_safe()  # numba in this process: vLLM's kernel scan
        started = time.perf_counter()
        try:
            llm = vllm.LLM(model=os.path.expanduser(model), **kwargs)
        except Exception as exc:
            _free_memory(teardown=True)
            message = " | ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
            message = message[:800]
            raise EngineLoadError(
                f"vLLM could not load {model!r} with {kwargs}: {type(exc).__name__}: {message}"
            ) from exc
        logger.info("loaded the vLLM engine for %s in %.1fs", model, time.perf_counter() - started)
        return llm

    def close(self) -> bool:
        with self.lock:
            llm, self.llm, self.key = self.llm, None, None
            if llm is None:
                return False
            try:
                llm.llm_engine.engine_core.shutdown()
            except Exception:
                logger.exception("vLLM engine shutdown raised")
            del llm
            _free_memory(teardown=False)
            logger.info("closed the vLLM engine")
            return True


def _free_memory(*, teardown: bool) -> None:
    if teardown:  # the engine core tears its distributed state down on shutdown itself
        try:
            from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

            cleanup_dist_env_and_memory()
        except Exception:
            logger.debug("no distributed state to clean up", exc_info=True)
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:
        logger.debug("no CUDA cache to empty", exc_info=True)
    with contextlib.suppress(OSError, AttributeError):  # freed heap back to the system (glibc)
        ctypes.CDLL("libc.so.6").malloc_trim(0)


_SLOT = _EngineSlot()


def engine_for(model: str, kwargs: dict[str, Any]) -> Any:
    """The process's engine for ``model`` with ``kwargs``; another one held is shut down first."""
    return _SLOT.get(model, kwargs)


def shutdown_engine(**_signal_kwargs: Any) -> bool:
    """Shut the process's engine down and free its memory; False when none was held."""
    return _SLOT.close()


def engine_stats() -> dict[str, Any]:
    return {
        "loaded": _SLOT.llm is not None,
        "model": (_SLOT.key or (None,))[0],
        "loads": _SLOT.loads,
    }


def _connect_worker_signals() -> None:
    try:
        from celery.signals import worker_process_shutdown, worker_shutdown
    except ImportError:  # pragma: no cover - celery is a dependency
        return
    worker_process_shutdown.connect(shutdown_engine, weak=False)
    worker_shutdown.connect(shutdown_engine, weak=False)


_connect_worker_signals()


# --- the backend ----------------------------------------------------------------------------


class VLLMOfflineBackend(LLMBackend):
    name = "vllm"
    capabilities = Capabilities(
        structured_output=True, logprobs=True, batch=True, gpu_worker=True, prefill=True
    )
    mode = "offline"
    BATCH = 1024  # requests per engine call in complete_iter (the engine schedules within it)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        problems = vllm_options.errors(config, prefix="vllm backend config: ")
        if problems:
            raise ValueError("; ".join(problems))
        self.endpoint: str = vllm_options.endpoint_of(config)
        if self.endpoint not in ("chat", "completions"):
            raise ValueError(
                f"vllm backend config: endpoint must be 'chat' or 'completions', not {self.endpoint!r}"
            )
        nested = config.get("vllm") if isinstance(config.get("vllm"), dict) else {}
        self.structured_output: bool = bool(
            config.get("structured_output", nested.get("require_guided_json", True))
        )
        self.engine_kwargs = vllm_options.engine_kwargs(config)
        self.sampling_defaults = vllm_options.sampling_defaults(config)
        self.chat = vllm_options.chat_options(config)

    @property
    def llm(self):
        return engine_for(self.model, self.engine_kwargs)

    def sampling_params(self, request: LLMRequest):
        vllm, StructuredOutputsParams = _vllm()
        kwargs: dict[str, Any] = dict(self.sampling_defaults)
        kwargs["temperature"] = request.temperature
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.top_p is not None:
            kwargs["top_p"] = request.top_p
        if request.stop:
            kwargs["stop"] = list(request.stop)
        for key in SAMPLING_EXTRA:
            if request.extra.get(key) is not None:
                kwargs[key] = request.extra[key]
        if isinstance(kwargs.get("stop"), str):
            kwargs["stop"] = [kwargs["stop"]]
        if request.json_schema is not None and self.structured_output:
            kwargs["structured_outputs"] = StructuredOutputsParams(json=request.json_schema)
        return vllm.SamplingParams(**kwargs)

    def _chat_kwargs(self, request: LLMRequest) -> dict[str, Any]:
        kwargs = dict(self.chat.get("chat_template_kwargs") or {})
        kwargs.update(request.extra.get("chat_template_kwargs") or {})
        return kwargs

    @staticmethod
    def _continue(request: LLMRequest) -> dict[str, Any]:
        """A prefilled request (``continue_final_message``): the template renders the last
        assistant message open, for the model to continue (nothing else is passed otherwise)."""
        if request.extra.get("continue_final_message"):
            return {"continue_final_message": True}
        return {}

    def prompt_token_ids(self, tokenizer: Any, request: LLMRequest) -> list[int]:
        """The prompt as the engine sees it: the chat template applied (chat endpoint), or the
        raw prompt with the tokenizer's special tokens (completions endpoint)."""
        if self.endpoint == "chat":
            messages = request.messages or [{"role": "user", "content": request.prompt or ""}]
            text = tokenizer.apply_chat_template(
                messages,
                tokenize=False,
                add_generation_prompt=request.extra.get(
                    "add_generation_prompt", self.chat.get("add_generation_prompt", True)
                ),
                chat_template=request.extra.get("chat_template") or self.chat.get("chat_template"),
                **self._continue(request),
                **self._chat_kwargs(request),
            )
            return list(tokenizer.encode(text, add_special_tokens=False))
        prompt = request.prompt
        if prompt is None:
            prompt = "\n\n".join(m.get("content", "") for m in request.messages or [])
        return list(tokenizer.encode(prompt))

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
        """All requests in one ``generate`` call (vLLM batches them itself). Raises
        :class:`EngineLoadError` when the engine cannot be loaded."""
        if not requests:
            return []
        llm = self.llm  # EngineLoadError / LLMError (no vllm) propagate: nothing can succeed
        started = time.perf_counter()
        results: list[LLMResponse | LLMError | None] = [None] * len(requests)
        prompts, params, positions = [], [], []
        try:
            tokenizer = llm.get_tokenizer()
            limit = llm.llm_engine.model_config.max_model_len
            for i, request in enumerate(requests):
                ids = self.prompt_token_ids(tokenizer, request)
                if len(ids) >= limit:
                    results[i] = LLMError(
                        f"prompt too long: {len(ids)} tokens, the engine's max_model_len is "
                        f"{limit} (vllm_max_model_len)",
                        retryable=False,
                    )
                    continue
                prompts.append({"prompt_token_ids": ids})
                params.append(self.sampling_params(request))
                positions.append(i)
            outputs = (
                llm.generate(prompts, sampling_params=params, use_tqdm=False) if prompts else []
            )
        except Exception as exc:  # noqa: BLE001 - one failure for the whole batch, never a raise
            err = LLMError(f"vLLM {self.model}: {type(exc).__name__}: {exc}", retryable=False)
            return [r if r is not None else err for r in results]
        elapsed = time.perf_counter() - started
        for i, out in zip(positions, outputs, strict=True):
            first = out.outputs[0] if out.outputs else None
            if first is None:
                results[i] = LLMError(f"vLLM {self.model}: no output", retryable=False)
                continue
            results[i] = LLMResponse(
                text=first.text,
                prompt_tokens=len(out.prompt_token_ids or []),
                completion_tokens=len(first.token_ids or []),
                finish_reason=first.finish_reason,
                latency_s=elapsed / max(1, len(prompts)),
                model=self.model,
            )
        return results  # type: ignore[return-value]
