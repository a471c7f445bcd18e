"""The parts of a suite config: problems found while reading it, the inputs, one model's LLM
settings (a model entry merged over ``generator_defaults``, or the evaluator) and how they map
onto how2review's LLM backends. Pure: no Django."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.secrets import llm_config_errors

DEFAULT_HOW2JUDGE_MODEL = "how2everything/how2judge"
DEFAULT_DATASET = "how2everything/how2bench"
# a local copy of DEFAULT_DATASET, read when a config names no inputs.path
DATASET_ENV = "HOW2BENCH_DATASET_PATH"
BACKENDS = ("deluge", "vllm", "openai")

# ``backend: deluge`` (the reference's lm-deluge) → the provider's OpenAI-compatible endpoint
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ("https://api.anthropic.com/v1/", "ANTHROPIC_API_KEY"),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY"),
    "google": ("https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY"),
}
LLM_KEYS = {
    "model",
    "run_name",
    "prompt_style",
    "backend",
    "provider",
    "temperature",
    "max_new_tokens",
    "max_requests_per_minute",
    "max_tokens_per_minute",
    "reasoning_effort",
    "vllm",
    # how2review's additions
    "base_url",
    "api_key_env",
    "concurrency",
    "structured_output",
}


class BenchConfigError(ValueError):
    """A suite config that cannot be used: every line names the file and the key."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


class Problems:
    """Errors and warnings found in one config file, each naming the file and the key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.errors.append(f"{self.path}: {key}: {message}")

    def warn(self, key: str, message: str) -> None:
        self.warnings.append(f"{self.path}: {key}: {message}")

    def raise_if_any(self) -> None:
        if self.errors:
            raise BenchConfigError(self.errors)


@dataclass(frozen=True)
class Inputs:
    path: Path | None = None
    kind: str = "auto"
    format: str = "auto"
    compression: str = "auto"
    include_globs: tuple[str, ...] = ()
    hf_repo: str = ""  # named in the config; how2review reads local files only


@dataclass(frozen=True)
class LLMSpec:
    """One role's model, resolved as the reference resolves it (plus how2review's keys)."""

    backend: str  # deluge | vllm | openai
    provider: str
    model: str
    temperature: float = 0.0
    max_new_tokens: int = 4096
    max_requests_per_minute: int = 1_000
    max_tokens_per_minute: int = 100_000
    reasoning_effort: str | None = None
    vllm: dict[str, Any] | None = None
    base_url: str = ""
    api_key_env: str = ""
    concurrency: int | None = None
    structured_output: bool = True
    explicit_limits: bool = False  # rate limits set in the config (else: only for deluge)

    @property
    def vllm_mode(self) -> str:
        return str((self.vllm or {}).get("mode", "generate")).strip().lower()

    def endpoint(self, *, default: str) -> str:
        """``chat`` or ``completions``: vLLM's ``mode`` (``generate`` → completions, the
        reference's default), API models chat, an ``openai`` server ``default``."""
        if self.backend == "vllm":
            return "chat" if self.vllm_mode == "chat" else "completions"
        return "chat" if self.backend == "deluge" else default

    def info(self) -> dict[str, str]:
        """The ``generator`` / ``judge`` field of the output records."""
        return {"backend": self.backend, "provider": self.provider, "model": self.model}


@dataclass(frozen=True)
class ModelSpec:
    index: int
    run_name: str
    prompt_style: str  # base | inst
    llm: LLMSpec = field(compare=False)

    @property
    def variant(self) -> str:
        """how2review's name of the prompt variant."""
        return "base" if self.prompt_style == "base" else "instruct"


def safe_dirname(text: str) -> str:
    out = "".join(c if (c.isalnum() or c in "._-") else "-" for c in text.strip()).strip("-")
    return out or "model"


def default_evaluator() -> LLMSpec:
    """The How2Judge (8B) on vLLM, template thinking off, as the reference defaults."""
    return LLMSpec(
        backend="vllm",
        provider="local",
        model=DEFAULT_HOW2JUDGE_MODEL,
        vllm={"chat_template_kwargs": {"enable_thinking": False}},
    )


def _number(problems, block, defaults, name, key, cast, default, minimum=None):
    value = block.get(name, defaults.get(name, default))
    if isinstance(value, bool) or value is None:
        problems.add(f"{key}.{name}", f"must be a number, got {value!r}")
        return default
    try:
        number = cast(value)
    except (TypeError, ValueError):
        problems.add(f"{key}.{name}", f"must be a number, got {value!r}")
        return default
    if cast is int and isinstance(value, float) and not value.is_integer():
        problems.add(f"{key}.{name}", f"must be a whole number, got {value!r}")
    if minimum is not None and number < minimum:
        problems.add(f"{key}.{name}", f"must be at least {minimum}, got {value!r}")
    return number


def _merge_vllm(base: Any, override: Any) -> dict[str, Any] | None:
    """The reference's one-level-deep merge of the defaults' and the model's ``vllm`` blocks."""
    if base is None and override is None:
        return None
    merged = dict(base or {})
    for k, v in dict(override or {}).items():
        if isinstance(v, Mapping) and isinstance(merged.get(k), Mapping):
            merged[k] = {**merged[k], **v}
        else:
            merged[k] = v
    return merged


def _check_vllm(problems: Problems, llm: dict[str, Any], key: str) -> None:
    """The ``vllm:`` block, checked by the one home of vLLM options (each problem names its
    key: ``models[0].vllm.mode``, ``evaluator.vllm.engine_kwargs.dtype`` …)."""
    from benchmarks.llm import vllm_options

    try:
        vllm_options.from_reference(llm)
    except ValueError as exc:
        messages: list[str] = []
        for piece in str(exc).split("; "):  # "a: x; known: …" is one message
            if messages and not piece.startswith(("vllm", "model")):
                messages[-1] += f"; {piece}"
            else:
                messages.append(piece)
        for message in messages:
            where, _, what = message.partition(": ")
            if where == "model":
                continue  # reported as the entry's model
            problems.add(f"{key}.{where}" if what else key, what.strip() or message)


def llm_spec(
    problems: Problems, block: dict[str, Any], defaults: dict[str, Any], *, key: str
) -> LLMSpec | None:
    """One model entry (over ``generator_defaults``) or the evaluator block, checked."""
    for name in sorted(set(block) - LLM_KEYS, key=str):
        problems.warn(f"{key}.{name}", "unknown key, ignored (as the reference does)")
    model = block.get("model")
    if not isinstance(model, str) or not model.strip():
        problems.add(f"{key}.model", "must be a non-empty string")
        return None
    backend = str(block.get("backend", defaults.get("backend", "deluge"))).strip().lower()
    if backend not in BACKENDS:
        problems.add(f"{key}.backend", f"must be one of {', '.join(BACKENDS)}, got {backend!r}")
        return None
    provider_raw = block.get("provider", defaults.get("provider"))
    provider = provider_raw.strip() if isinstance(provider_raw, str) else ""
    base_url = str(block.get("base_url", defaults.get("base_url")) or "").strip()
    api_key_env = str(block.get("api_key_env", defaults.get("api_key_env")) or "").strip()
    if backend == "deluge":
        if not provider:
            problems.add(
                f"{key}.provider", "is required with backend: deluge (openai, anthropic, gemini)"
            )
        elif provider.lower() not in PROVIDERS and not base_url:
            problems.add(
                f"{key}.provider",
                f"{provider!r}: how2review knows the endpoints of {', '.join(sorted(PROVIDERS))}; "
                "for another provider use backend: openai with base_url and api_key_env",
            )
        else:
            url, env = PROVIDERS.get(provider.lower(), ("", ""))
            base_url, api_key_env = base_url or url, api_key_env or env
    elif backend == "openai" and not base_url:
        problems.add(f"{key}.base_url", "is required with backend: openai (the server's /v1 URL)")
    elif backend == "vllm" and not provider:
        provider = "local"
    if backend == "openai" and not provider:
        provider = "openai"
    for name, problem in llm_config_errors(
        api_key_env=api_key_env, base_url=base_url if backend == "openai" else ""
    ).items():  # secrets by name only, LLM hosts from the allow-list (core.secrets)
        problems.add(f"{key}.{name}", problem)
    vllm_block = block.get("vllm")
    if vllm_block is not None and not isinstance(vllm_block, Mapping):
        problems.add(f"{key}.vllm", "must be a mapping")
        vllm_block = None
    vllm_defaults = defaults.get("vllm") if isinstance(defaults.get("vllm"), Mapping) else None
    vllm = _merge_vllm(vllm_defaults, vllm_block)
    if backend == "vllm" and isinstance(model, str) and model.strip():
        _check_vllm(problems, {"model": model, "vllm": vllm or {}}, key)
    reasoning = block.get("reasoning_effort", defaults.get("reasoning_effort"))
    limits_given = any(
        k in block or k in defaults for k in ("max_requests_per_minute", "max_tokens_per_minute")
    )
    concurrency = block.get("concurrency", defaults.get("concurrency"))
    structured = block.get("structured_output", defaults.get("structured_output", True))
    if not isinstance(structured, bool):
        problems.add(f"{key}.structured_output", "must be true or false")
    return LLMSpec(
        backend=backend,
        provider=provider,
        model=model.strip(),
        temperature=_number(problems, block, defaults, "temperature", key, float, 0.0, 0.0),
        max_new_tokens=_number(problems, block, defaults, "max_new_tokens", key, int, 4096, 1),
        max_requests_per_minute=_number(
            problems, block, defaults, "max_requests_per_minute", key, int, 1_000, 1
        ),
        max_tokens_per_minute=_number(
            problems, block, defaults, "max_tokens_per_minute", key, int, 100_000, 1
        ),
        reasoning_effort=str(reasoning).strip() if reasoning is not None else None,
        vllm=vllm,
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=(
            _number(problems, block, defaults, "concurrency", key, int, 16, 1)
            if concurrency is not None
            else None
        ),
        structured_output=bool(structured),
        explicit_limits=limits_given,
    )
