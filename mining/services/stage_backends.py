"""A mining batch's LLM stage backends: one backend per distinct stage config, shared by the
stages that name the same one (one instance: one concurrency, one connection pool). Used by the
batch's chunks (:mod:`mining.services.execution`), its launch (:mod:`mining.services.ingest`)
and its batch mode (:mod:`mining.services.batch_mode`)."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.llm.base import LLMBackend
from benchmarks.llm.registry import build_backend
from mining.models import MiningBatch


def config_identity(config: dict[str, Any]) -> str:
    """Equal for two stage configs that name the same backend (one instance, one concurrency)."""
    return json.dumps(config, sort_keys=True, default=str)


def stage_backends(batch: MiningBatch) -> dict[str, LLMBackend]:
    """One backend per selected LLM stage, built from the batch's configs; stages whose configs
    are equal share one instance (and so its concurrency and connections)."""
    built: dict[str, LLMBackend] = {}
    out: dict[str, LLMBackend] = {}
    for key, config in (batch.backends or {}).items():
        ident = config_identity(config)
        if ident not in built:
            built[ident] = build_backend(config)
        out[key] = built[ident]
    return out


def distinct_backends(backends: dict[str, LLMBackend]) -> list[LLMBackend]:
    """Each backend of ``backends`` once (stages that share one name it once)."""
    return list({id(b): b for b in backends.values()}.values())
