"""The options of vLLM (engine and sampling), in one place: their names, their checks, and the
mapping from the reference implementation's ``vllm:`` config section (pure, no vLLM import).

Two shapes are accepted wherever a vLLM config is read (:func:`engine_kwargs`,
:func:`sampling_defaults`, :func:`chat_options`):

- flat keys, as a judge's ``decoding`` or a run's ``backend_options`` store them:
  ``vllm_<engine option>`` (``vllm_max_model_len: 8192``) and the sampling options by their
  own names (``top_k: 20``, ``chat_template_kwargs: {...}``);
- the reference's nested section (``how2everything/llm/vllm_client.py``'s ``VLLMConfig``)::

      vllm:
        mode: generate | chat          # -> endpoint completions | chat
        engine_kwargs: {revision: ..., dtype: ..., tensor_parallel_size: ...}
        sampling_kwargs: {top_p: ..., top_k: ..., min_p: ..., seed: ..., stop: [...]}
        chat_template_kwargs: {enable_thinking: false}
        chat_template: "...jinja..."   # or chat_template_path (read when the config is mapped)
        add_generation_prompt: true
        require_guided_json: true      # -> structured_output
        hf_token_env: HF_TOKEN, worker_multiproc_method: spawn   # accepted, environment only

Flat keys win over nested ones. :func:`from_reference` turns a reference evaluator or
generator entry (``backend: vllm``, ``model``, ``temperature``, ``max_new_tokens``, ``vllm: {...}``)
into this project's fields: ``{"model", "endpoint", "structured_output", "decoding"}`` — what
``judging`` needs to create a judge (``Judge(decoding=...)``) and what a generation run or a
mining stage takes as its backend config.

Every check names the key (``decoding.vllm_dtype: must be one of …``), see :func:`errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Check = Callable[[Any], str | None]  # a message when the value is wrong, else None

DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")


def _int(lo: int | None = None) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int):
            return "must be an integer"
        if lo is not None and v < lo:
            return f"must be ≥ {lo}"
        return None

    return check


def _number(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return "must be a number"
        if lo is not None and (v <= lo if open_lo else v < lo):
            return f"must be {'>' if open_lo else '≥'} {lo}"
        if hi is not None and v > hi:
            return f"must be ≤ {hi}"
        return None

    return check


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "must be true or false"


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and v.strip() else "must be a non-empty string"


def _mapping(v: Any) -> str | None:
    return None if isinstance(v, Mapping) else "must be a JSON object"


def _dtype(v: Any) -> str | None:
    return None if v in DTYPES else f"must be one of {', '.join(DTYPES)}"


def _stop(v: Any) -> str | None:
    if isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) for s in v)):
        return None
    return "must be a string or a list of strings"


def _top_k(v: Any) -> str | None:
    problem = _int()(v)
    if problem is None and v < 1 and v not in (0, -1):
        return "must be ≥ 1 (or 0 / -1: no limit)"
    return problem


# vllm.LLM(...) keyword arguments this project passes (config key: vllm_<name>)
ENGINE_OPTIONS: dict[str, Check] = {
    "revision": _text,
    "tokenizer": _text,
    "dtype": _dtype,
    "max_model_len": _int(1),
    "gpu_memory_utilization": _number(0.0, 1.0, open_lo=True),
    "tensor_parallel_size": _int(1),
    "quantization": _text,
    "enforce_eager": _bool,
    "seed": _int(0),
    "trust_remote_code": _bool,
    "download_dir": _text,
    "max_num_seqs": _int(1),
    "structured_outputs_config": _mapping,  # e.g. {"backend": "guidance"}
}

# vllm.SamplingParams(...) options (config key: their own name)
SAMPLING_OPTIONS: dict[str, Check] = {
    "temperature": _number(0.0),
    "top_p": _number(0.0, 1.0, open_lo=True),
    "top_k": _top_k,
    "min_p": _number(0.0, 1.0),
    "max_tokens": _int(1),
    "stop": _stop,
    "seed": _int(),
    "repetition_penalty": _number(0.0, open_lo=True),
    "presence_penalty": _number(-2.0, 2.0),
    "frequency_penalty": _number(-2.0, 2.0),
}

# options of the chat call (LLM.chat / the server's chat endpoint)
CHAT_OPTIONS: dict[str, Check] = {
    "chat_template_kwargs": _mapping,
    "chat_template": _text,
    "add_generation_prompt": _bool,
}

# bounds of the JSON schema sent for structured output (see benchmarks.llm.schema)
SCHEMA_OPTIONS: dict[str, Check] = {
    "json_max_string_length": _int(1),
    "json_max_items": _int(1),
}

REFERENCE_KEYS = (
    "mode",
    "engine_kwargs",
    "sampling_kwargs",
    "chat_template_kwargs",
    "chat_template",
    "chat_template_path",
    "add_generation_prompt",
    "require_guided_json",
    "hf_token_env",
    "worker_multiproc_method",
)


def _nested(config: Mapping[str, Any]) -> Mapping[str, Any]:
    nested = config.get("vllm")
    return nested if isinstance(nested, Mapping) else {}


def engine_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``vllm.LLM`` keyword arguments of a config (nested ``vllm.engine_kwargs``, then the
    flat ``vllm_*`` keys), ``None`` values left out."""
    out = dict(_nested(config).get("engine_kwargs") or {})
    for key in ENGINE_OPTIONS:
        if config.get(f"vllm_{key}") is not None:
            out[key] = config[f"vllm_{key}"]
    return {k: v for k, v in out.items() if v is not None}


def sampling_defaults(config: Mapping[str, Any]) -> dict[str, Any]:
    """Sampling options a config sets for every request (nested ``vllm.sampling_kwargs``,
    then flat keys); a request's own values win over these."""
    out = dict(_nested(config).get("sampling_kwargs") or {})
    for key in SAMPLING_OPTIONS:
        if config.get(key) is not None:
            out[key] = config[key]
    return out


def chat_options(config: Mapping[str, Any]) -> dict[str, Any]:
    """``chat_template_kwargs``, ``chat_template``, ``add_generation_prompt`` of a config."""
    nested = _nested(config)
    out = {k: nested[k] for k in CHAT_OPTIONS if nested.get(k) is not None}
    out.update({k: config[k] for k in CHAT_OPTIONS if config.get(k) is not None})
    return out


def endpoint_of(config: Mapping[str, Any]) -> str:
    """``chat`` or ``completions``: the flat ``endpoint`` key, else the reference's ``mode``."""
    if config.get("endpoint"):
        return str(config["endpoint"])
    mode = _nested(config).get("mode")
    return {"chat": "chat", "generate": "completions"}.get(str(mode or "").lower(), "chat")


def errors(config: Mapping[str, Any], *, prefix: str = "", engine: bool = True) -> list[str]:
    """Every problem of a vLLM / sampling config, each naming its key (``prefix`` + key).
    ``engine`` False checks the sampling and chat options only (an HTTP backend)."""
    problems: list[str] = []

    def check(key: str, value: Any, rule: Check) -> None:
        if value is None:
            return
        message = rule(value)
        if message:
            problems.append(f"{prefix}{key}: {message}, not {value!r}")

    if engine:
        for key, rule in ENGINE_OPTIONS.items():
            check(f"vllm_{key}", config.get(f"vllm_{key}"), rule)
        unknown = sorted(
            k[5:] for k in config if k.startswith("vllm_") and k[5:] not in ENGINE_OPTIONS
        )
        if unknown:
            problems.append(
                f"{prefix}vllm_{unknown[0]}: unknown engine option; known: "
                + ", ".join(f"vllm_{k}" for k in ENGINE_OPTIONS)
            )
    for table in (SAMPLING_OPTIONS, CHAT_OPTIONS, SCHEMA_OPTIONS):
        for key, rule in table.items():
            check(key, config.get(key), rule)
    nested = config.get("vllm")
    if nested is not None:
        problems.extend(_nested_errors(nested, prefix=f"{prefix}vllm."))
    return problems


def _nested_errors(nested: Any, *, prefix: str) -> list[str]:
    if not isinstance(nested, Mapping):
        return [f"{prefix.rstrip('.')}: must be a JSON object"]
    problems = []
    unknown = sorted(set(nested) - set(REFERENCE_KEYS))
    if unknown:
        problems.append(f"{prefix}{unknown[0]}: unknown key; known: {', '.join(REFERENCE_KEYS)}")
    if nested.get("mode") not in (None, "generate", "chat"):
        problems.append(f"{prefix}mode: must be 'generate' or 'chat', not {nested['mode']!r}")
    for key in ("engine_kwargs", "sampling_kwargs", "chat_template_kwargs"):
        if nested.get(key) is not None and not isinstance(nested[key], Mapping):
            problems.append(f"{prefix}{key}: must be a mapping")
    for key, value in dict(nested.get("engine_kwargs") or {}).items():
        rule = ENGINE_OPTIONS.get(key)
        if rule is not None and value is not None and (message := rule(value)):
            problems.append(f"{prefix}engine_kwargs.{key}: {message}, not {value!r}")
    for key, value in dict(nested.get("sampling_kwargs") or {}).items():
        rule = SAMPLING_OPTIONS.get(key)
        if rule is not None and value is not None and (message := rule(value)):
            problems.append(f"{prefix}sampling_kwargs.{key}: {message}, not {value!r}")
    for key in ("add_generation_prompt", "require_guided_json"):
        if nested.get(key) is not None and not isinstance(nested[key], bool):
            problems.append(f"{prefix}{key}: must be true or false")
    return problems


def from_reference(entry: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """A reference evaluator/generator entry with ``backend: vllm`` → this project's fields
    ``{"model", "endpoint", "structured_output", "decoding"}``. Raises ``ValueError`` naming the
    key when something is wrong (``vllm.mode``, ``vllm.engine_kwargs.dtype``, …)."""
    model = str(entry.get("model") or "").strip()
    if not model:
        raise ValueError("model: required (a local model directory or a model id)")
    nested = entry.get("vllm") or {}
    problems = _nested_errors(nested, prefix="vllm.")
    if problems:
        raise ValueError("; ".join(problems))
    decoding: dict[str, Any] = {"temperature": float(entry.get("temperature", 0.0) or 0.0)}
    if entry.get("max_new_tokens") is not None:
        decoding["max_tokens"] = int(entry["max_new_tokens"])
    decoding.update(dict(nested.get("sampling_kwargs") or {}))
    for key, value in dict(nested.get("engine_kwargs") or {}).items():
        decoding[f"vllm_{key}"] = value
    if nested.get("chat_template_kwargs"):
        decoding["chat_template_kwargs"] = dict(nested["chat_template_kwargs"])
    if nested.get("chat_template"):
        decoding["chat_template"] = str(nested["chat_template"])
    elif nested.get("chat_template_path"):
        path = Path(str(nested["chat_template_path"]))
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            raise ValueError(f"vllm.chat_template_path: file not found: {path}")
        decoding["chat_template"] = path.read_text(encoding="utf-8")
    if nested.get("add_generation_prompt") is False:
        decoding["add_generation_prompt"] = False
    structured = nested.get("require_guided_json", True)
    if structured:
        decoding.pop("stop", None)  # as the reference: no stop strings under guided JSON
    problems = errors(decoding, prefix="vllm: ")
    if problems:
        raise ValueError("; ".join(problems))
    return {
        "model": model,
        "endpoint": {"chat": "chat"}.get(str(nested.get("mode") or "generate"), "completions"),
        "structured_output": bool(structured),
        "decoding": decoding,
    }
