"""The backend interface. Concrete backends: OpenAI-compatible HTTP (the official ``openai``
client; OpenAI, vLLM servers, others) and vLLM offline (``vllm.LLM``, GPU workers only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class LLMRequest:
    """One completion request. ``messages`` for chat models, ``prompt`` for base models."""

    messages: list[dict[str, str]] | None = None
    prompt: str | None = None
    max_tokens: int | None = None
    temperature: float = 0.0
    top_p: float | None = None
    stop: list[str] | None = None
    json_schema: dict[str, Any] | None = None  # structured output when the backend supports it
    json_schema_name: str = "response"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LLMResponse:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    latency_s: float = 0.0
    model: str = ""


class LLMError(Exception):
    """A request that failed for good (after retries). ``retryable`` tells callers whether
    trying later could succeed (429, 5xx, timeouts) or not (400, auth, bad model)."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class LLMBackend(Protocol):
    def complete(self, request: LLMRequest) -> LLMResponse: ...

    def complete_many(
        self, requests: Sequence[LLMRequest], *, concurrency: int | None = None
    ) -> list[LLMResponse | LLMError]:
        """Run many requests; results in input order; a failed one is an ``LLMError``, never a raise."""
        ...
