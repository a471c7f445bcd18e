"""A local server of the documented OpenAI Batch API, on loopback, for tests.

It speaks what the official ``openai`` client sends for batches: ``POST /v1/files``
(multipart upload, ``purpose=batch``), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``, ``GET /v1/batches`` (the list,
newest first, paged with ``limit``/``after``) and ``GET /v1/models`` (the launch check). Batches do not run on their own: the test moves them::

    with BatchTestServer(responder=judge_responder) as server:
        ...                                   # the code under test uploads and creates
        server.run(n=3)                       # the first 3 requests of every open batch answer
        server.finish()                       # every open batch completes: output/error files
        server.expire()                       # ... or expires: what did not run is batch_expired
        server.fail(lambda custom_id: ..., status=500)  # those requests fail inside the batch

``auto_finish = True`` completes each batch as it is created; ``create_gate = threading.Event()``
creates each batch but holds its answer until the event is set (a worker killed in between). Cancelling through the API
writes the files of what ran so far and leaves the rest out, as a provider does. The responder
takes a :class:`tests.support.llm_server.RecordedRequest` and returns the completion text.
``server.ran`` counts, per request body (a digest of it), how often it was answered (what a
provider bills);
``server.batches`` holds each batch's state.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from tests.support.llm_server import RecordedRequest, default_responder


def _digest(body: dict) -> bytes:
    """A request body's key in ``ran``: 16 bytes, whatever the body's size."""
    return hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=16).digest()


class BatchTestServer:
    def __init__(self, responder: Callable[[RecordedRequest], str] = default_responder) -> None:
        self.responder = responder
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.done: dict[str, dict[str, dict]] = {}  # batch id -> custom_id -> output line
        self.ran: Counter[str] = Counter()
        self.failing: list[tuple[Callable[[str], bool], int]] = []
        self.auto_finish = False
        self.calls: Counter[str] = Counter()  # "create", "cancel", "retrieve", "upload", "list"
        # when set to an Event: a batch is created, then its answer waits for the event
        self.create_gate: threading.Event | None = None
        self.lock = threading.RLock()
        self._n = 0
        self.httpd: ThreadingHTTPServer | None = None

    # -- life ------------------------------------------------------------------------------
    def __enter__(self) -> BatchTestServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self.httpd is not None
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base_url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    # -- control -------------------------------------------------------------------------
    def _id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}-{self._n}"

    def _open(self, batch_id: str | None) -> list[dict]:
        return [
            b
            for b in self.batches.values()
            if (batch_id is None or b["id"] == batch_id)
            and b["status"] in ("validating", "in_progress")
        ]

    def fail(self, match: Callable[[str], bool], *, status: int = 500) -> None:
        """Requests whose custom_id matches fail (once each) with ``status`` when they run."""
        self.failing.append((match, status))

    def run(self, *, n: int | None = None, batch_id: str | None = None) -> int:
        """Answer up to ``n`` not yet answered requests of each open batch (all without n)."""
        answered = 0
        with self.lock:
            for batch in self._open(batch_id):
                todo = [
                    r for r in self._requests(batch) if r["custom_id"] not in self.done[batch["id"]]
                ]
                for line in todo[:n]:
                    self.done[batch["id"]][line["custom_id"]] = self._answer(line)
                    answered += 1
                batch["status"] = "in_progress"
        return answered

    def _answer(self, line: dict) -> dict:
        custom_id = line["custom_id"]
        for i, (match, status) in enumerate(self.failing):
            if match(custom_id):
                del self.failing[i]
                body = {"error": {"message": f"server error {status}", "type": "server_error"}}
                return self._line(custom_id, status, body)
        req = RecordedRequest("POST", line["url"], {}, line["body"], time.time())
        self.ran[_digest(line["body"])] += 1
        text = self.responder(req)
        if isinstance(text, dict):  # the llm_server responders' form: {"text": ..., ...}
            text = text["text"]
        body = {
            "id": self._id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": line["body"].get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
        }
        return self._line(custom_id, 200, body)

    def _line(self, custom_id: str, status: int, body: dict) -> dict:
        return {
            "id": self._id("batch_req"),
            "custom_id": custom_id,
            "response": {"status_code": status, "request_id": self._id("req"), "body": body},
            "error": None,
        }

    def _requests(self, batch: dict) -> list[dict]:
        text = self.files[batch["input_file_id"]].decode()
        return [json.loads(x) for x in text.splitlines() if x.strip()]

    def _close(self, batch: dict, status: str, missing_code: str | None) -> None:
        done = self.done[batch["id"]]
        ok = [x for x in done.values() if x["response"]["status_code"] == 200]
        bad = [x for x in done.values() if x["response"]["status_code"] != 200]
        if missing_code:
            for line in self._requests(batch):
                if line["custom_id"] not in done:
                    bad.append(
                        {
                            "id": self._id("batch_req"),
                            "custom_id": line["custom_id"],
                            "response": None,
                            "error": {"code": missing_code, "message": f"request {missing_code}"},
                        }
                    )
        for key, lines in (("output_file_id", ok), ("error_file_id", bad)):
            if lines:
                file_id = self._id("file")
                self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                batch[key] = file_id
        batch["status"] = status
        batch["request_counts"] = {
            "total": len(self._requests(batch)),
            "completed": len(ok),
            "failed": len([x for x in bad if x["response"]]),
        }

    def finish(self, *, batch_id: str | None = None) -> None:
        with self.lock:
            for batch in self._open(batch_id):
                self.run(batch_id=batch["id"])
                self._close(batch, "completed", None)

    def expire(self, *, batch_id: str | None = None) -> None:
        with self.lock:
            for batch in self._open(batch_id):
                self._close(batch, "expired", "batch_expired")

    # -- HTTP ----------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        path, _, query = h.path.partition("?")
        parts = path.rstrip("/").split("/")[2:]  # after /v1
        if method == "GET" and parts == ["batches"]:
            status, payload = self._list(dict(parse_qsl(query)))
        else:
            with self.lock:
                status, payload = self._route(method, parts, raw, h.headers.get("content-type", ""))
            if method == "POST" and parts == ["batches"] and self.create_gate is not None:
                self.create_gate.wait(120)  # created, but the answer held back (a kill test)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        h.send_response(status)
        h.send_header(
            "content-type",
            "application/octet-stream" if isinstance(payload, bytes) else "application/json",
        )
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _route(self, method: str, parts: list[str], raw: bytes, ctype: str) -> tuple[int, Any]:
        if method == "GET" and parts == ["models"]:
            from tests.support.llm_server import SERVED_MODELS

            data = [{"id": m, "object": "model"} for m in SERVED_MODELS]
            return 200, {"object": "list", "data": data}
        if method == "POST" and parts == ["files"]:
            self.calls["upload"] += 1
            message = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {ctype}\r\n\r\n".encode() + raw
            )
            fields = {
                p.get_param("name", header="content-disposition"): p for p in message.iter_parts()
            }
            content = fields["file"].get_payload(decode=True)
            file_id = self._id("file")
            self.files[file_id] = content
            return 200, {
                "id": file_id,
                "object": "file",
                "bytes": len(content),
                "created_at": int(time.time()),
                "filename": "requests.jsonl",
                "purpose": "batch",
                "status": "processed",
            }
        if method == "GET" and len(parts) == 3 and parts[0] == "files" and parts[2] == "content":
            if parts[1] not in self.files:
                return 404, {"error": {"message": "no such file"}}
            return 200, self.files[parts[1]]
        if method == "POST" and parts == ["batches"]:
            self.calls["create"] += 1
            body = json.loads(raw)
            if body.get("input_file_id") not in self.files:
                return 400, {"error": {"message": "input_file_id not found"}}
            batch = {
                "id": self._id("batch"),
                "object": "batch",
                "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"],
                "completion_window": body["completion_window"],
                "status": "validating",
                "created_at": int(time.time()),
                "metadata": body.get("metadata"),
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
            }
            self.batches[batch["id"]] = batch
            self.done[batch["id"]] = {}
            if self.auto_finish:
                self.finish(batch_id=batch["id"])
            return 200, batch
        if len(parts) >= 2 and parts[0] == "batches" and parts[1] in self.batches:
            batch = self.batches[parts[1]]
            if method == "GET" and len(parts) == 2:
                self.calls["retrieve"] += 1
                return 200, batch
            if method == "POST" and parts[2:] == ["cancel"]:
                self.calls["cancel"] += 1
                if batch["status"] in ("validating", "in_progress"):
                    self._close(batch, "cancelled", None)
                return 200, batch
        return 404, {"error": {"message": f"no route {method} /{'/'.join(parts)}"}}

    def _list(self, query: dict[str, str]) -> tuple[int, Any]:
        """``GET /v1/batches``: newest first, ``limit`` per page, cursor ``after`` (a batch id)."""
        with self.lock:
            self.calls["list"] += 1
            newest = sorted(self.batches.values(), key=lambda b: int(b["id"].split("-")[1]))[::-1]
            if query.get("after"):
                ids = [b["id"] for b in newest]
                newest = newest[ids.index(query["after"]) + 1 :] if query["after"] in ids else []
            limit = int(query.get("limit") or 20)
            page = newest[:limit]
            return 200, {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(newest) > limit,
            }

    def input_lines(self) -> list[dict]:
        """Every request line uploaded, in order."""
        with self.lock:
            return [line for b in self.batches.values() for line in self._requests(b)]
