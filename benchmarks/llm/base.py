"""The one LLM backend contract. Concrete backends: OpenAI-compatible HTTP (the official
``openai`` client; OpenAI, vLLM servers, others) and vLLM offline (``vllm.LLM``, GPU workers).

A backend is built from a config dict (:func:`benchmarks.llm.registry.build_backend`) and
implements :class:`LLMBackend`:

- ``complete_iter(requests, should_stop=None)`` yields ``(index, result)`` as results arrive;
- ``complete_many(requests)`` returns results in input order;
- ``complete(request)`` one request, raising :class:`LLMError` when it fails for good;
- ``close()`` releases connections or engines.

``mode`` (a class attribute) says how requests reach the model: ``"online"`` (one request at a
time over HTTP, at most ``concurrency`` in flight to the endpoint across every worker,
:mod:`benchmarks.llm.concurrency`), ``"offline"`` (a model held by the worker process); further
modes (a provider's batch API) add their own value and keep this contract.

A failed request is an :class:`LLMError` in the results, never a raise. What a backend can do is
declared once, in ``capabilities``; how much it may send (concurrency, requests and tokens per
minute) is read once, from the config, into ``limits`` (:meth:`Limits.from_config`).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar


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


LLMResult = LLMResponse | LLMError


class NotSent(LLMError):
    """A request the caller stopped before it (or its next attempt) went out: nothing was sent
    for it, so its item stays as it was (the feeds do not hand it over)."""

    def __init__(self) -> None:
        super().__init__("not sent: the caller stopped", retryable=True)


class PrefillUnsupported(LLMError):
    """The backend cannot continue a partial assistant message (its message names it)."""


# request.extra keys of a prefilled chat request: vLLM's names (the server's request body and
# the chat template's arguments), which the vLLM offline backend reads too
CONTINUE_FINAL_MESSAGE = {"continue_final_message": True, "add_generation_prompt": False}


def prefill_request(request: LLMRequest, prefix: str, *, chat: bool = True) -> LLMRequest:
    """``request`` with the answer begun by ``prefix``: for a chat request, a last assistant
    message holding ``prefix`` and :data:`CONTINUE_FINAL_MESSAGE` in ``extra``; for a raw
    prompt (``chat=False``, a completions endpoint), ``prefix`` appended to the prompt (the
    messages' contents joined as the completions endpoints join them)."""
    if chat:
        messages = list(request.messages or [{"role": "user", "content": request.prompt or ""}])
        if messages and messages[-1].get("role") == "assistant":
            raise ValueError("the request already ends with an assistant message")
        messages.append({"role": "assistant", "content": prefix})
        return replace(
            request,
            messages=messages,
            prompt=None,
            extra={**request.extra, **CONTINUE_FINAL_MESSAGE},
        )
    prompt = request.prompt
    if prompt is None:
        prompt = "\n\n".join(m.get("content", "") for m in request.messages or [])
    return replace(request, messages=None, prompt=prompt + prefix)


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, declared on its class.

    ``gpu_worker``: the backend holds a model in the process (vLLM offline), so its work runs
    in a GPU worker (the ``gpu`` queue, one task at a time); see
    :func:`benchmarks.llm.registry.queue_for`.
    """

    structured_output: bool = False
    logprobs: bool = False
    batch: bool = False  # takes a whole batch in one call (scheduling is the engine's)
    gpu_worker: bool = False
    prefill: bool = False  # can continue a partial assistant message (see LLMBackend.prefilled)


@dataclass(frozen=True)
class Limits:
    """How much a backend may send at once: the one place these config keys are read."""

    concurrency: int = 8
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Limits:
        def positive(key: str, default: int | None) -> int | None:
            value = config.get(key)
            if value in (None, "", 0):
                return default
            problem = f"backend config: {key} must be a positive integer, not {value!r}"
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(problem)
            try:
                number = int(value)
            except (TypeError, ValueError):
                raise ValueError(problem) from None
            if number < 1:
                raise ValueError(problem)
            return number

        return cls(
            concurrency=positive("concurrency", cls.concurrency) or cls.concurrency,
            requests_per_minute=positive("requests_per_minute", None),
            tokens_per_minute=positive("tokens_per_minute", None),
        )


class LLMBackend(ABC):
    """Base class of every backend. Subclasses set ``name`` and ``capabilities`` and implement
    :meth:`complete_iter` (or, for batch backends, :meth:`complete_many` and
    :meth:`complete_iter` in slices)."""

    name: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities()
    mode: ClassVar[str] = "online"
    # a backend around another one (``config["inner"]``, e.g. ``record``): the registry
    # (:func:`benchmarks.llm.registry.build_backend`) builds that one and passes it as ``inner``
    wraps: ClassVar[bool] = False

    def __init__(self, config: dict[str, Any]) -> None:
        if not config.get("model"):
            raise ValueError(
                f"{self.name or type(self).__name__} backend config: 'model' is required"
            )
        self.config = dict(config)
        self.model: str = str(config["model"])
        self.limits = Limits.from_config(config)

    @abstractmethod
    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        """Yield ``(index, result)`` as results arrive. ``requests`` is consumed lazily;
        ``should_stop()`` is polled between submissions: once true, nothing new is sent and what
        is in flight finishes."""

    def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResult]:
        """Results in input order; a failed request is an :class:`LLMError`."""
        results: list[LLMResult | None] = [None] * len(requests)
        for index, result in self.complete_iter(requests):
            results[index] = result
        return results  # type: ignore[return-value]

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One request; raises :class:`LLMError` when it fails for good."""
        result = self.complete_many([request])[0]
        if isinstance(result, LLMError):
            raise result
        return result

    def prefill_refusal(self) -> str | None:
        """None when this backend can continue a partial assistant message (the LongProc
        segment analysis prefills gold segments), else why not, naming the backend."""
        if self.capabilities.prefill:
            return None
        return (
            f"LLM backend {self.name or type(self).__name__!r} (model {self.model}) cannot "
            "prefill the answer (continue a partial assistant message); use the vllm backend, "
            'an OpenAI-compatible vLLM server with "prefill": true, or a completions endpoint'
        )

    def prefilled(self, request: LLMRequest, prefix: str) -> LLMRequest:
        """``request`` with its answer begun by ``prefix`` (:func:`prefill_request`), the model
        to continue it; :class:`PrefillUnsupported` when the backend cannot."""
        refusal = self.prefill_refusal()
        if refusal:
            raise PrefillUnsupported(refusal, retryable=False)
        return prefill_request(request, prefix, chat=getattr(self, "endpoint", "chat") == "chat")

    def close(self) -> None:  # noqa: B027 - most backends hold nothing to release
        """Release connections or engines; the backend may be used again afterwards."""

    def unstored_gate(self) -> Any | None:
        """The endpoint-wide limit on requests sent and not yet stored by their callers (a
        :mod:`benchmarks.llm.concurrency` gate of ``limits.concurrency`` slots, shared by every
        lane, process and machine using the same endpoint + model + key name), which a caller's
        backpressure (:class:`core.runs.reply_writer.Backpressure`) holds one slot of per request
        until its reply is stored: what a killed worker re-buys is then at most the concurrency
        for the whole run. None: the backend has no shared endpoint (vLLM offline: its engine is
        the worker's own)."""
        return None


def takes_admit(backend: LLMBackend) -> bool:
    """Whether the backend's ``complete_iter`` takes ``admit`` (the caller's backpressure: it
    keeps handing over replies while the next request waits). An ``admit`` with a ``wake``
    attribute (:class:`core.runs.reply_writer.Backpressure`) gets a callable there from a
    backend that waits for replies (the request loop): the caller calls it when ``admit()`` may
    have turned true (a slot freed by the writer), so the feed sends at once instead of at its
    next poll."""
    return "admit" in inspect.signature(backend.complete_iter).parameters
