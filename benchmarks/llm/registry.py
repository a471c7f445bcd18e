"""Build an LLM backend from a config dict, by registered name or dotted path (like Django's
session backends)::

    build_backend({"backend": "openai", "model": "gpt-4.1", "base_url": ...})
    build_backend({"backend": "myproject.llm.MyBackend", ...})

A backend class takes the config dict as its only argument and subclasses
:class:`benchmarks.llm.base.LLMBackend`. :func:`queue_for` is the one routing rule: work for a
backend that holds a model in the worker process (vLLM offline) goes to the ``gpu`` queue.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from benchmarks.llm.base import LLMBackend

BACKENDS: dict[str, str] = {
    "openai": "benchmarks.llm.openai_compat.OpenAICompatBackend",
    "openai-batch": "benchmarks.llm.batch.OpenAIBatchBackend",  # or openai + "mode": "batch"
    "vllm-batch": "benchmarks.llm.vllm_batch.VLLMBatchBackend",
    "vllm": "benchmarks.llm.vllm_offline.VLLMOfflineBackend",
    "replay": "benchmarks.llm.replay.ReplayBackend",
    "record": "benchmarks.llm.replay.RecordingBackend",
}


def backend_class(name: str) -> type[LLMBackend]:
    path = BACKENDS.get(name, name)
    if "." not in path:
        raise ValueError(
            f"unknown LLM backend {name!r}; known: {', '.join(sorted(BACKENDS))} or a dotted path"
        )
    try:
        cls = import_string(path)
    except ImportError as exc:
        raise ValueError(f"LLM backend {name!r} cannot be imported ({path}): {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, LLMBackend)):
        raise ValueError(f"LLM backend {name!r} ({path}) is not a subclass of LLMBackend")
    return cls


def _name(config: dict[str, Any]) -> str:
    name = config.get("backend") or "openai"
    return "openai-batch" if name == "openai" and config.get("mode") == "batch" else name


def build_backend(config: dict[str, Any]) -> LLMBackend:
    cls = backend_class(_name(config))
    if not cls.wraps:
        return cls(config)
    inner = config.get("inner")  # a backend around another: that one is built first
    if not isinstance(inner, dict):
        raise ValueError(f"{cls.name} backend config: 'inner' (the backend it wraps) is required")
    return cls(config, inner=build_backend(inner))


def queue_for(config: dict[str, Any]) -> str | None:
    """The Celery queue for work with this backend: ``settings.CELERY_GPU_QUEUE`` ("gpu") when
    the backend runs in a GPU worker, else None (the default queue)."""
    cls = backend_class(_name(config))
    return settings.CELERY_GPU_QUEUE if cls.capabilities.gpu_worker else None
