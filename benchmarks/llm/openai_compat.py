"""OpenAI-compatible HTTP backend (the official ``openai`` client): the OpenAI API, vLLM
servers and any other server speaking ``/v1/chat/completions`` or ``/v1/completions``.

Config keys (all but ``model`` optional)::

    {"backend": "openai", "base_url": "http://127.0.0.1:8001/v1", "model": "gpt-4.1",
     "api_key_env": "OPENAI_API_KEY",       # the NAME of the env variable; the key is never stored
     "endpoint": "chat" | "completions",    # chat for instruct models, completions for base models
     "concurrency": 16, "requests_per_minute": 500, "tokens_per_minute": 200000,
     "rate_limit_key": "team-a",            # optional: who shares the per-minute budget
     "timeout_s": 120, "max_retries": 5, "backoff_base_s": 0.5, "backoff_max_s": 30,
     "structured_output": true,             # send response_format json_schema when asked
     "ramp_up_s": 0.2,                      # spread the first wave over 0.2 s (default 0; streams)
     "transport": "aiohttp" | "threads"}    # how complete_iter sends (default: aiohttp if installed)

``"prefill": true`` says the server continues a final assistant message (a vLLM server:
``continue_final_message`` in the body), so the backend can prefill an answer
(:meth:`~benchmarks.llm.base.LLMBackend.prefilled`); without it only the completions endpoint
can (the prefix is appended to the prompt), and a chat endpoint such as OpenAI's is refused.

``concurrency`` is the endpoint's limit: at most that many requests in flight to this endpoint
+ model + key name across every lane, process and machine (:mod:`benchmarks.llm.concurrency`: a
lease-based semaphore in Redis, per process on the embedded broker), taken before each HTTP
request and given back by its reply. ``complete_iter`` keeps that many requests in flight as
coroutines of the ``openai`` client's async API on its aiohttp transport, on one event loop
(:mod:`benchmarks.llm.openai_feed`; the ``openai[aiohttp]`` extra), or, with ``"transport":
"threads"`` or without aiohttp, on a thread pool of that width with the sync client; single
requests (``complete``) the sync client. The rate limiter is shared by the backend's threads and,
with Redis, every worker process using the limit key (:mod:`benchmarks.llm.ratelimit`). Retries
(backoff with jitter, Retry-After) on 429, 5xx, timeouts, connection errors, malformed replies.

Its public face, which the feed uses too: :meth:`OpenAICompatBackend.send` /
:meth:`~OpenAICompatBackend.send_async` (one HTTP request, no retry; the body and the reply are
:mod:`benchmarks.llm.openai_wire`'s), :meth:`~OpenAICompatBackend.after_failure` (the back-off
or the final error), :meth:`~OpenAICompatBackend.estimate_tokens` (the rate limit's cost),
:meth:`~OpenAICompatBackend.complete` and :meth:`~OpenAICompatBackend.complete_or_error` (with
retries), :meth:`~OpenAICompatBackend.complete_iter` (many).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from benchmarks.llm import openai_feed
from benchmarks.llm.base import (
    Capabilities,
    LLMBackend,
    LLMError,
    LLMRequest,
    LLMResponse,
    NotSent,
)
from benchmarks.llm.concurrency import build_gate
from benchmarks.llm.openai_wire import WireFormat, estimate_tokens
from benchmarks.llm.ratelimit import build_rate_limiter
from benchmarks.llm.retry import RetryPolicy, parse_retry_after
from core.runs.reply_writer import unstored_width
from core.secrets import api_key_env_error, llm_config_errors

if TYPE_CHECKING:
    import openai


def _client_libs():
    """The ``openai`` client and its HTTP library (httpx2 with openai 3.x, else httpx), imported
    on first use (~0.5 s): routing a run to its queue needs only this module's class."""
    import openai

    try:
        import httpx2 as httpx
    except ImportError:  # pragma: no cover - depends on the openai version
        import httpx  # type: ignore[no-redef]
    return openai, httpx


def warm_up(*, tokens: bool = True) -> None:
    """Load the ``openai`` client, its HTTP libraries (aiohttp's transport where installed) and
    SSL context (~0.45 s of CPU, ~23 MB) and, with ``tokens``, the token counter's tables (~0.4 s,
    ~130 MB), which a chunk loads on first use (:mod:`benchmarks.apps`: a worker's main process,
    the client before its pool forks; with ``H2R_WORKER_WARM_UP=1`` each pool process, the rest)."""
    openai, httpx = _client_libs()
    if openai_feed.aiohttp_installed():
        _ = openai.DefaultAioHttpClient  # imports the aiohttp transport
    _ssl_context(httpx)
    if tokens:
        from benchmarks.tokens import count_tokens

        count_tokens("warm")


@functools.cache
def _ssl_context(httpx):
    """One verifying SSL context per process (two threads at once may both build it; one is
    kept), the one the HTTP library builds by default
    (``create_ssl_context()``: same CA bundle, same environment variables), shared by every
    client: building one reads and parses the CA bundle, tens of ms of CPU that each chunk's
    new client paid again (measured with py-spy in a judge run's worker)."""
    return httpx.create_ssl_context()


logger = logging.getLogger(__name__)

NO_KEY = "EMPTY"  # what vLLM servers accept when no key is configured


class OpenAICompatBackend(LLMBackend):
    name = "openai"
    capabilities = Capabilities(structured_output=True, logprobs=True)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.base_url: str | None = config.get("base_url") or None
        self.api_key_env: str = config.get("api_key_env") or ""
        # secrets by name only, hosts from the allow-list (core.secrets: the one rule)
        for key, problem in llm_config_errors(
            api_key_env=self.api_key_env, base_url=self.base_url or ""
        ).items():
            raise ValueError(f"openai backend config: {key}: {problem}")
        self.endpoint: str = config.get("endpoint") or "chat"
        if self.endpoint not in ("chat", "completions"):
            raise ValueError(
                f"openai backend config: endpoint must be 'chat' or 'completions', not {self.endpoint!r}"
            )
        # the first wave of requests is spread over this many seconds: replies then arrive
        # spread out instead of all at once, so none waits for the others to be read
        self.ramp_up_s: float = float(config.get("ramp_up_s") or 0.0)
        self.structured_output: bool = bool(config.get("structured_output", True))
        # the request bodies and the replies (benchmarks.llm.openai_wire)
        self.wire = WireFormat(
            model=self.model, endpoint=self.endpoint, structured_output=self.structured_output
        )
        self.transport: str = config.get("transport") or "auto"
        if self.transport not in ("auto", "aiohttp", "threads"):
            raise ValueError(
                "openai backend config: transport must be 'aiohttp' or 'threads', "
                f"not {self.transport!r}"
            )
        self.timeout_s: float = float(config.get("timeout_s") or 120)
        self.retry = RetryPolicy(
            max_retries=int(config.get("max_retries", 5)),
            base_s=float(config.get("backoff_base_s", 0.5)),
            max_s=float(config.get("backoff_max_s", 30.0)),
        )
        # one budget per limit key across every worker process (Redis), else per process
        self.limiter = build_rate_limiter(
            key=self.rate_limit_key(),
            requests_per_minute=self.limits.requests_per_minute,
            tokens_per_minute=self.limits.tokens_per_minute,
        )
        # the endpoint's concurrency across every worker (Redis), else per process
        self.gate = build_gate(key=self.endpoint_key(), limit=self.limits.concurrency)
        self._client: openai.OpenAI | None = None
        self._aclient: openai.AsyncOpenAI | None = None  # the aiohttp transport's, on the loop
        self._client_lock = threading.Lock()
        self._response_type: type | None = None  # the HTTP library's Response, set with the client
        self._key_prefix = os.urandom(6).hex()  # idempotency keys: this prefix and a counter
        self._requests = itertools.count()
        self._content_param = False  # the client's post takes bytes as ``content`` (3.x)

    def prefill_refusal(self) -> str | None:
        """A completions endpoint takes the prefix on the prompt; a chat endpoint only when the
        config says the server continues a final assistant message (``"prefill": true``, a vLLM
        server); a provider's batch API never."""
        where = f"model {self.model} at {self.base_url or 'the OpenAI API'}"
        if self.capabilities.batch:
            return f"LLM backend {self.name!r} ({where}) cannot prefill the answer in batch mode"
        if self.endpoint == "completions" or self.config.get("prefill") is True:
            return None
        return (
            f"LLM backend {self.name!r} ({where}) cannot prefill the answer on its chat "
            'endpoint: set "prefill": true in the backend config only for a vLLM server '
            "(it continues a final assistant message, continue_final_message), or use the "
            "completions endpoint"
        )

    def endpoint_key(self) -> str:
        """The endpoint, the key's variable name and the model: who shares one ``concurrency``
        (and, by default, one per-minute budget)."""
        return f"openai|{self.base_url or 'default'}|{self.api_key_env}|{self.model}"

    def rate_limit_key(self) -> str:
        """Which budget this backend spends: ``rate_limit_key`` from the config, else the
        endpoint key (a provider's limits are per account and model). Backends with the same
        key share requests/min and tokens/min."""
        return str(self.config.get("rate_limit_key") or "") or self.endpoint_key()

    def unstored_gate(self):
        """Requests sent and not yet stored, endpoint-wide (see the base class)."""
        return build_gate(
            key=f"{self.endpoint_key()}|unstored", limit=unstored_width(self.limits.concurrency)
        )

    # -- client --------------------------------------------------------------------------
    def _api_key(self) -> str:
        if not self.api_key_env:
            return NO_KEY
        problem = api_key_env_error(self.api_key_env)
        if problem:  # checked at construction too; read nothing the rule refuses
            raise LLMError(f"api_key_env: {problem}", retryable=False)
        value = os.environ.get(self.api_key_env)
        if not value:
            raise LLMError(
                f"environment variable {self.api_key_env!r} (the judge's api_key_env) is not set",
                retryable=False,
            )
        return value

    @property
    def client(self) -> openai.OpenAI:
        """One client (one connection pool) shared by all threads of the backend."""
        with self._client_lock:
            if self._client is None:
                self._client = self._new_client()
            return self._client

    def _new_client(self) -> openai.OpenAI:
        openai, httpx = _client_libs()
        self._response_type = httpx.Response
        self._content_param = "content" in inspect.signature(openai.OpenAI.post).parameters
        # TCP_NODELAY: the client writes headers and body separately; with Nagle on, the body
        # waits for the server's delayed ACK (~40 ms a request on Linux).
        size = max(20, self.limits.concurrency * 2)
        transport = httpx.HTTPTransport(
            verify=_ssl_context(httpx),
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
        return openai.OpenAI(
            api_key=self._api_key(),
            base_url=self.base_url,
            timeout=self.timeout_s,
            max_retries=0,  # retries are ours: backoff + jitter + Retry-After
            http_client=openai.DefaultHttpxClient(transport=transport, timeout=self.timeout_s),
        )

    @property
    def aclient(self) -> openai.AsyncOpenAI:
        """The async client on the aiohttp transport (one connection pool, used on the event
        loop of :mod:`benchmarks.llm.openai_feed`)."""
        with self._client_lock:
            if self._aclient is None:
                openai, httpx = _client_libs()
                self._response_type = httpx.Response
                self._content_param = "content" in inspect.signature(openai.OpenAI.post).parameters
                size = max(20, self.limits.concurrency * 2)
                # aiohttp sets TCP_NODELAY on its connections itself
                http = openai.DefaultAioHttpClient(
                    verify=_ssl_context(httpx),
                    limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                    timeout=self.timeout_s,
                )
                self._aclient = openai.AsyncOpenAI(
                    api_key=self._api_key(),
                    base_url=self.base_url,
                    timeout=self.timeout_s,
                    max_retries=0,  # retries are ours, as for the sync client
                    http_client=http,
                )
            return self._aclient

    def uses_aiohttp(self) -> bool:
        """Whether ``complete_iter`` sends on the aiohttp transport (the config's ``transport``;
        by default when aiohttp is installed)."""
        if self.transport == "threads":
            return False
        return self.transport == "aiohttp" or openai_feed.aiohttp_installed()

    def close(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
            aclient, self._aclient = self._aclient, None
        if client is not None:
            client.close()
        if aclient is not None:
            openai_feed.close_client(aclient)

    # -- one request (no retries) ---------------------------------------------------------
    def _post_args(self, client: Any, path: str, body: bytes) -> tuple[str, dict[str, Any]]:
        """``client.post``'s URL and keywords: the absolute URL (a path is parsed twice a
        request), the body as bytes (``content``, openai 3.x), an idempotency key from a counter."""
        url = str(client.base_url).rstrip("/") + path
        options = {"idempotency_key": f"h2r-{self._key_prefix}-{next(self._requests)}"}
        if self._content_param:
            return url, {"content": body, "options": options}
        return url, {"body": json.loads(body), "options": options}

    def send(self, request: LLMRequest) -> LLMResponse:
        """One HTTP request, no retry, through the client's documented raw-request API
        (``client.post(path, ..., cast_to=httpx.Response)``): same auth, headers, timeouts and
        error types as ``chat.completions.create`` without the typed request transform and
        response models, which cost ~1 ms of CPU a request (measured) and matter at 300+/s.
        Raises what the client raises (:meth:`after_failure` says whether to try again)."""
        path, body = self.wire.body(request)
        started = time.perf_counter()
        client = self.client
        url, kw = self._post_args(client, path, body)
        raw = client.post(url, cast_to=self._response_type or _client_libs()[1].Response, **kw)
        return self.wire.reply(raw.content, started)

    async def send_async(self, request: LLMRequest) -> LLMResponse:
        """:meth:`send` on the async client (:attr:`aclient`; the feed's event loop,
        :mod:`benchmarks.llm.openai_feed`)."""
        path, body = self.wire.body(request)
        started = time.perf_counter()
        url, kw = self._post_args(self._aclient, path, body)
        raw = await self._aclient.post(url, cast_to=self._response_type, **kw)
        return self.wire.reply(raw.content, started)

    def estimate_tokens(self, request: LLMRequest) -> int:
        """What the request spends of the tokens-per-minute budget before its usage is known."""
        return estimate_tokens(request)

    # -- retries -------------------------------------------------------------------------

    @staticmethod
    def _retry_after(exc: Exception) -> float | None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        if not headers:
            return None
        ms = headers.get("retry-after-ms")
        if ms:
            try:
                return max(0.0, float(ms) / 1000.0)
            except ValueError:
                pass
        return parse_retry_after(headers.get("retry-after"))

    @staticmethod
    def _classify(exc: Exception) -> tuple[bool, int | None]:
        """(retryable, status) for an exception from the client."""
        openai, _ = _client_libs()
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            return (status == 429 or status == 408 or status >= 500), status
        if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
            return True, None
        if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
            return True, None  # malformed body (bad JSON): a server fault, try again
        return False, None

    def after_failure(self, exc: Exception, attempt: int) -> float | LLMError:
        """The back-off before trying ``attempt`` + 1 again, or the error when the request
        fails for good (not retryable, or out of retries)."""
        retryable, status = self._classify(exc)
        if not retryable or attempt >= self.retry.max_retries:
            label = f"HTTP {status}" if status else type(exc).__name__
            error = LLMError(
                f"{self.model}: {label} after {attempt + 1} attempt(s): {exc}",
                retryable=retryable,
                status=status,
            )
            error.__cause__ = exc
            return error
        delay = self.retry.delay(attempt, retry_after=self._retry_after(exc))
        logger.info(
            "retrying %s in %.2fs after %s (attempt %d)",
            self.model,
            delay,
            type(exc).__name__,
            attempt + 1,
        )
        return delay

    def complete(
        self, request: LLMRequest, *, stop: Callable[[], bool] | None = None
    ) -> LLMResponse:
        """One request with retries; raises ``LLMError`` when it fails for good, and
        :class:`~benchmarks.llm.base.NotSent` when ``stop()`` is true before an attempt."""
        attempt = 0
        tokens = self.estimate_tokens(request) if self.limiter.enabled else 0
        while True:
            self.limiter.acquire(tokens=tokens)
            try:
                return self._gated_call(request, stop)
            except LLMError:
                raise
            except Exception as exc:
                delay = self.after_failure(exc, attempt)
                if isinstance(delay, LLMError):
                    raise delay from exc
                time.sleep(delay)
                attempt += 1

    def _gated_call(
        self, request: LLMRequest, stop: Callable[[], bool] | None = None
    ) -> LLMResponse:
        """One HTTP request holding one of the endpoint's ``concurrency`` slots (waiting for
        one), given back when the reply (or the failure) arrives; never held across a retry's
        back-off. ``stop()`` true once the slot is held: nothing is sent (``NotSent``)."""
        slot = self.gate.acquire()
        try:
            if stop is not None and stop():
                raise NotSent()
            return self.send(request)
        finally:
            self.gate.release(slot)

    def complete_or_error(
        self, request: LLMRequest, *, stop: Callable[[], bool] | None = None
    ) -> LLMResponse | LLMError:
        """:meth:`complete` that returns the error instead of raising it (one item of many)."""
        try:
            return self.complete(request, stop=stop)
        except LLMError as exc:
            return exc
        except Exception as exc:  # noqa: BLE001 - complete_many never raises per item
            return LLMError(f"{type(exc).__name__}: {exc}", retryable=False)

    # -- many requests -------------------------------------------------------------------
    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
        admit: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResponse | LLMError]]:
        """Yield ``(index, result)`` as requests finish, keeping ``limits.concurrency`` in flight.

        ``requests`` is consumed lazily. ``should_stop()`` (optional) is polled between
        submissions: when it returns true no new request is sent; those in flight finish.
        ``admit()`` (optional, the caller's backpressure) is polled before each new request:
        false holds it back, replies keep being yielded, and it is asked again shortly.
        On the aiohttp transport when it is used, else on a thread pool
        (:mod:`benchmarks.llm.openai_feed`).
        """
        if self.uses_aiohttp():
            return openai_feed.loop_feed(self, requests, should_stop=should_stop, admit=admit)
        return openai_feed.thread_feed(self, requests, should_stop=should_stop, admit=admit)
