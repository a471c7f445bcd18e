"""Build an LLM backend from a config dict, by registered name or dotted path (like Django's
session backends)::

    build_backend({"backend": "openai", "model": "gpt-4.1", "base_url": ...})
    build_backend({"backend": "myproject.llm.MyBackend", ...})

A backend class takes the config dict as its only argument and implements
:class:`benchmarks.llm.base.LLMBackend`.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

from benchmarks.llm.base import LLMBackend

BACKENDS: dict[str, str] = {
    "openai": "benchmarks.llm.openai_compat.OpenAICompatBackend",
    "vllm": "benchmarks.llm.vllm_offline.VLLMOfflineBackend",
}


def backend_class(name: str) -> type:
    path = BACKENDS.get(name, name)
    if "." not in path:
        raise ValueError(
            f"unknown LLM backend {name!r}; known: {', '.join(sorted(BACKENDS))} or a dotted path"
        )
    try:
        return import_string(path)
    except ImportError as exc:
        raise ValueError(f"LLM backend {name!r} cannot be imported ({path}): {exc}") from exc


def build_backend(config: dict[str, Any]) -> LLMBackend:
    name = config.get("backend") or "openai"
    return backend_class(name)(config)
