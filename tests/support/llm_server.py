"""A local OpenAI-compatible test server on loopback, for tests and benchmarks.

It speaks ``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /v1/models``
well enough for the official ``openai`` client, is threaded (one thread per connection,
HTTP/1.1 keep-alive; 64+ concurrent requests are fine) and binds 127.0.0.1 on a free port.

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

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one write (flushed after each request)
    disable_nagle_algorithm = True
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, payload: bytes, *, headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        owner = self.server.owner
        if self.path.rstrip("/").endswith("/v1/models"):
            body = {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "test"}
                                               for m in owner.models]}
            self._send(200, json.dumps(body).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, b'{"error": {"message": "request body is not JSON"}}')
            return
        if not (path.endswith("/v1/chat/completions") or path.endswith("/v1/completions")):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        req = RecordedRequest("POST", path, {k.lower(): v for k, v in self.headers.items()}, body, time.time())
        fault = owner._take_fault(req)
        req.fault = fault.kind if fault else None
        owner._record(req)
        if fault is not None:
            if fault.kind == "status":
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = f"{fault.retry_after:g}"
                err = {"error": {"message": f"injected {fault.status}", "type": "test_fault", "code": fault.status}}
                self._send(fault.status, json.dumps(err).encode(), headers=headers)
                return
            if fault.kind == "hang":
                time.sleep(fault.seconds)
                self.close_connection = True
                return
            if fault.kind == "malformed":
                self._send(200, b'{"id": "x", "choices": [ this is not json')
                return
            if fault.kind == "slow":
                time.sleep(fault.seconds)
        if owner.latency_s:
            time.sleep(owner.latency_s)
        try:
            reply = owner.responder(req)
        except Exception as exc:  # a broken responder is a 500, visible in the test
            self._send(500, json.dumps({"error": {"message": f"responder failed: {exc!r}"}}).encode())
            return
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
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": usage,
            }
        else:
            payload = {
                "id": f"cmpl-{uuid.uuid4().hex[:12]}", "object": "text_completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}],
                "usage": usage,
            }
        self._send(200, json.dumps(payload).encode())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024
    owner: "LLMTestServer"

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, TimeoutError)):
            return  # the client went away (timeout, killed worker): expected in fault tests
        super().handle_error(request, client_address)


class LLMTestServer:
    def __init__(self, *, responder: Responder | None = None, latency_s: float = 0.0,
                 models: tuple[str, ...] = ("test-model",)) -> None:
        self.responder: Responder = responder or default_responder
        self.latency_s = latency_s
        self.models = models
        self.requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> "LLMTestServer":
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="llm-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "LLMTestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- faults and records --------------------------------------------------------------
    def add_fault(self, kind: str, *, count: int = 1, status: int = 500, retry_after: float | None = None,
                  seconds: float = 0.0, match: Callable[[RecordedRequest], bool] | None = None) -> None:
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
