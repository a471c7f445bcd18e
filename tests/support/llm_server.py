"""A local OpenAI-compatible test server on loopback, for tests and benchmarks.

It speaks ``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /v1/models``
well enough for the official ``openai`` client and binds 127.0.0.1 on a free port. It is an
asyncio HTTP/1.1 server (keep-alive) on its own thread, with responders called on a pool of
256 threads: hundreds of concurrent requests are fine, latency costs no thread, and a
responder may block.

Usage (pytest: use the ``llm_server`` fixture from :mod:`tests.support.llm_fixtures`)::

    from tests.support.llm_server import LLMTestServer

    with LLMTestServer(responder=lambda req: "hello") as server:
        backend = build_backend({"backend": "openai", "base_url": server.base_url, "model": "m"})
        ...
        assert len(server.requests) == 1
        assert server.requests[0].body["model"] == "m"

Replies come from the *responder*, a callable taking a :class:`RecordedRequest` and
returning either a ``str`` (the completion text) or a dict ``{"text": str,
"prompt_tokens": int?, "completion_tokens": int?, "finish_reason": str?}``. The default
responder answers ``"echo: "`` + the last user message / prompt (deterministic).
``req.prompt_text`` is the prompt (completions) or the messages' contents joined (chat);
``req.body`` is the parsed JSON body, e.g. ``req.body.get("response_format")``.

Models: ``GET /v1/models`` lists ``models`` (default :data:`SERVED_MODELS`); with
``models=None`` the server offers no model list (HTTP 404), as some servers do.

Latency: ``server.latency_s = 0.2`` makes every reply wait 200 ms (or pass ``latency_s=``).

Faults on demand, consumed in order by the next matching requests::

    server.add_fault("status", status=429, retry_after=1)   # 429 with Retry-After: 1
    server.add_fault("status", status=500, count=3)         # three 500s
    server.add_fault("hang", seconds=5)                     # no reply for 5 s (client timeout)
    server.add_fault("malformed")                           # 200 with a body that is not JSON
    server.add_fault("slow", seconds=1.5)                   # a correct reply, after 1.5 s
    server.add_fault("status", status=500, match=lambda r: "goal X" in r.prompt_text)

``server.requests`` records every request (faulted ones too, with ``.fault`` set);
``server.reset()`` clears requests and faults. Status faults reply with an OpenAI-style
error body. Everything is thread-safe.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

Responder = Callable[["RecordedRequest"], "str | dict[str, Any]"]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    fault: str | None = None

    @property
    def kind(self) -> str:
        return "chat" if self.path.endswith("/chat/completions") else "completions"

    @property
    def prompt_text(self) -> str:
        if self.kind == "chat":
            return "\n".join(str(m.get("content", "")) for m in self.body.get("messages") or [])
        prompt = self.body.get("prompt", "")
        return prompt if isinstance(prompt, str) else "\n".join(map(str, prompt))

    @property
    def last_message(self) -> str:
        if self.kind == "chat":
            messages = self.body.get("messages") or []
            return str(messages[-1].get("content", "")) if messages else ""
        return self.prompt_text


@dataclass
class Fault:
    kind: str  # status | hang | malformed | slow
    count: int = 1
    status: int = 500
    retry_after: float | None = None
    seconds: float = 0.0
    match: Callable[[RecordedRequest], bool] | None = None
    used: int = field(default=0)


def default_responder(req: RecordedRequest) -> str:
    return "echo: " + req.last_message


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def _http_response(status: int, payload: bytes, headers: dict[str, str] | None = None) -> bytes:
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
    ]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload


# What ``GET /v1/models`` lists by default: the model names the suite's judges, generators and
# mining stages use (a run's launch check refuses a model the server does not list).
SERVED_MODELS = (
    "test-model",
    "test-model-b",
    "m",
    "m1",
    "m2",
    "m-b",
    "x",
    "jm",
    "judge-model",
    "gen-model",
    "conv-model",
    "another-model",
    "model-x",
    "model-y",
    "teacher",
    "teacher-model",
    "gpt-4.1",
    "gpt-4o",
    "gpt-5",
    "gpt-x",
    "org/m",
    "org/model-8b",
    "org/judge-model",
    "how2judge-8b",
    "gen-a",
    "gen-b",
    "gen-c",
    "a",
    "b",
    "g",
    "j",
    "sliced",
    "/m",
)


class LLMTestServer:
    """An asyncio HTTP/1.1 server (keep-alive, TCP_NODELAY) on its own thread; responders run
    on a thread pool, so a responder may block (e.g. ``time.sleep``) without stalling others."""

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        models: tuple[str, ...] | None = SERVED_MODELS,
        responder_threads: int = 256,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency_s = latency_s
        self.models = models
        self.requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._responder_threads = responder_threads
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._port = 0

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> LLMTestServer:
        self._loop = asyncio.new_event_loop()
        self._executor = ThreadPoolExecutor(
            max_workers=self._responder_threads, thread_name_prefix="llm-responder"
        )
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._server = self._loop.run_until_complete(
                    asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=2048)
                )
                self._port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # noqa: BLE001 - reported to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=serve, name="llm-test-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is None or self._server is None:
            return
        loop, server = self._loop, self._server

        async def shutdown() -> None:
            server.close()
            for writer in list(self._writers):
                writer.close()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(5)
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._server = None
            self._loop = None

    def __enter__(self) -> LLMTestServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- HTTP ----------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                try:
                    method, target, _version = lines[0].split(" ", 2)
                except ValueError:
                    return
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if line:
                        key, _, value = line.partition(":")
                        headers[key.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                try:
                    raw = await reader.readexactly(length) if length else b""
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                response = await self._respond(method, target, headers, raw)
                if response is None:  # a hang: no reply, the connection is dropped
                    return
                writer.write(response)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _respond(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> bytes | None:
        path = target.split("?", 1)[0].rstrip("/")
        if method == "GET":
            if path.endswith("/v1/models") and self.models is not None:
                body = {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"}
                        for m in self.models
                    ],
                }
                return _http_response(200, json.dumps(body).encode())
            return _http_response(404, b'{"error": {"message": "not found"}}')
        if method != "POST":
            return _http_response(404, b'{"error": {"message": "not found"}}')
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return _http_response(400, b'{"error": {"message": "request body is not JSON"}}')
        if not path.endswith(("/v1/chat/completions", "/v1/completions")):
            return _http_response(404, b'{"error": {"message": "not found"}}')
        req = RecordedRequest("POST", path, headers, body, time.time())
        fault = self._take_fault(req)
        req.fault = fault.kind if fault else None
        self._record(req)
        if fault is not None:
            if fault.kind == "status":
                extra = (
                    {"Retry-After": f"{fault.retry_after:g}"}
                    if fault.retry_after is not None
                    else {}
                )
                err = {
                    "error": {
                        "message": f"injected {fault.status}",
                        "type": "test_fault",
                        "code": fault.status,
                    }
                }
                return _http_response(fault.status, json.dumps(err).encode(), extra)
            if fault.kind == "hang":
                await asyncio.sleep(fault.seconds)
                return None
            if fault.kind == "malformed":
                return _http_response(200, b'{"id": "x", "choices": [ this is not json')
            if fault.kind == "slow":
                await asyncio.sleep(fault.seconds)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        try:
            reply = await asyncio.get_running_loop().run_in_executor(
                self._executor, self.responder, req
            )
        except Exception as exc:  # noqa: BLE001 - a broken responder is a 500, visible in the test
            return _http_response(
                500, json.dumps({"error": {"message": f"responder failed: {exc!r}"}}).encode()
            )
        if isinstance(reply, str):
            reply = {"text": reply}
        text = str(reply.get("text", ""))
        usage = {
            "prompt_tokens": int(reply.get("prompt_tokens", _tokens(req.prompt_text))),
            "completion_tokens": int(reply.get("completion_tokens", _tokens(text))),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = reply.get("finish_reason", "stop")
        model = body.get("model", "test-model")
        if req.kind == "chat":
            payload = {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish,
                    }
                ],
                "usage": usage,
            }
        else:
            payload = {
                "id": f"cmpl-{uuid.uuid4().hex[:12]}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}],
                "usage": usage,
            }
        return _http_response(200, json.dumps(payload).encode())

    # -- faults and records --------------------------------------------------------------
    def add_fault(
        self,
        kind: str,
        *,
        count: int = 1,
        status: int = 500,
        retry_after: float | None = None,
        seconds: float = 0.0,
        match: Callable[[RecordedRequest], bool] | None = None,
    ) -> None:
        if kind not in ("status", "hang", "malformed", "slow"):
            raise ValueError(f"unknown fault kind {kind!r}")
        with self._lock:
            self._faults.append(Fault(kind, count, status, retry_after, seconds, match))

    def _take_fault(self, req: RecordedRequest) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.used < fault.count and (fault.match is None or fault.match(req)):
                    fault.used += 1
                    return fault
        return None

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._faults.clear()

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return sum(f.count - f.used for f in self._faults)
