"""A local stand-in for Prolific's API v1 (a threaded ``http.server``) following the documented
request and response shapes, for tests: token auth, paginated submission lists
(``results`` + ``_links.next.href`` + ``meta.count``), submission transitions with Prolific's
rules (only ``AWAITING REVIEW`` submissions move; a rejection needs a known category and a
message of at least 100 characters), return requests, bulk bonus payments (set up, then pay),
participant groups, and ``{"error": {...}}`` bodies. ``fail_next`` scripts faults. Every
exchange is kept (``exchanges``) and checked against Prolific's published models
(``tests/annotation/prolific/test_contract.py``).

Studies created, published and followed from the app are in
:mod:`tests.support.prolific_lifecycle`; webhooks (secrets, subscriptions, signed deliveries)
in :mod:`tests.support.prolific_webhooks`."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from urllib.parse import parse_qs, urlparse

from tests.support.prolific_lifecycle import LifecycleMixin
from tests.support.prolific_webhooks import WebhooksMixin

CATEGORIES = {
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
}


class ProlificTestServer(LifecycleMixin, WebhooksMixin):
    def __init__(self, *, token: str = "test-token", page_size: int = 2):
        self.token = token
        self.page_size = page_size
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, dict] = {}
        self.groups: dict[str, list[str]] = {}
        self.bulk: dict[str, dict] = {}
        self.requests: list[tuple[str, str, dict | None]] = []
        # every call answered: (method, path, request body, status, response body), for the
        # contract test against Prolific's published models (tests/annotation/prolific/)
        self.exchanges: list[tuple[str, str, dict | None, int, object]] = []
        self.faults: list[tuple[str, int]] = []  # (path part, status) for the next matching call
        self._ids = count(1)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self.outbox: list[tuple[str, dict]] = []  # events queued under the lock
        self._hooks_init()

    # --- fixtures -------------------------------------------------------------------------
    def add_study(self, study_id: str, *, name: str = "A study") -> None:
        self.studies[study_id] = {"id": study_id, "name": name, "status": "ACTIVE"}

    def add_submission(self, study_id: str, participant_id: str, *, status="AWAITING REVIEW"):
        sub_id = f"sub{next(self._ids):04d}"
        self.submissions[sub_id] = {
            "id": sub_id,
            "study_id": study_id,
            "participant_id": participant_id,
            "status": status,
            "started_at": "2026-11-23T10:00:00.000Z",
            "completed_at": "2026-11-23T10:40:00.000Z",
            "study_code": "ABC123",
        }
        return sub_id

    def fail_next(self, path_part: str, status: int) -> None:
        self.faults.append((path_part, status))

    def calls(self, method: str | None = None, path_part: str = "") -> list:
        return [r for r in self.requests if (method in (None, r[0])) and path_part in r[1]]

    # --- lifecycle -----------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/api/v1"

    def start(self) -> ProlificTestServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                server._handle(self, "GET")

            def do_POST(self):
                server._handle(self, "POST")

            def do_PATCH(self):
                server._handle(self, "PATCH")

            def do_DELETE(self):
                server._handle(self, "DELETE")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- dispatch ------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return self._send(h, 400, _err(400, "Body is not JSON"))
        with self._lock:
            self.requests.append((method, url.path, body))
            if h.headers.get("Authorization") != f"Token {self.token}":
                return self._send(h, 401, _err(401, "Invalid token."))
            for i, (part, status) in enumerate(self.faults):
                if part in url.path:
                    del self.faults[i]
                    if status >= 600:  # close without answering
                        h.close_connection = True
                        return None
                    return self._send(h, status, _err(status, "Scripted failure"))
            parts = [p for p in url.path.split("/") if p][2:]  # drop api/v1
            query, extra = parse_qs(url.query), {}
            hooks = self._route_hooks(method, parts, query, body or {})
            if hooks is not None:
                status, payload, extra = hooks
            else:
                routed = self._route_studies(method, parts, body or {})
                status, payload = routed or self._route(method, url.path, query, body or {})
        with self._lock:
            self.exchanges.append((method, url.path, body, status, payload))
        self._send(h, status, payload, extra)
        self._flush()  # events of this call, delivered after the answer and outside the lock
        return None

    def _send(self, h, status: int, payload, extra=None) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        h.send_response(status)
        for name, value in (extra or {}).items():
            h.send_header(name, value)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _route(self, method, path, query, body):
        parts = [p for p in path.split("/") if p][2:]  # drop api/v1
        if method == "GET" and len(parts) == 2 and parts[0] == "studies":
            study = self.studies.get(parts[1])
            return (200, study) if study else (404, _err(404, "Study not found."))
        if method == "GET" and len(parts) == 3 and parts[0] == "studies":
            return self._list(parts[1], int((query.get("page") or ["1"])[0]), path)
        if method == "POST" and parts == ["submissions", "bonus-payments"]:
            return self._bonus_create(body)
        if method == "POST" and parts[:1] == ["submissions"] and len(parts) == 3:
            sub = self.submissions.get(parts[1])
            if not sub:
                return 404, _err(404, "Submission not found.")
            if parts[2] == "transition":
                return self._transition(sub, body)
            if parts[2] == "request-return":
                reasons = body.get("request_return_reasons")
                if not isinstance(reasons, list) or not reasons:
                    return 400, _err(400, {"request_return_reasons": ["This field is required."]})
                sub["return_requested"] = reasons  # kept here; answered with the time
                return 200, {
                    "id": sub["id"],
                    "status": sub["status"],
                    "participant": sub["participant_id"],
                    "return_requested": "2026-11-23T10:45:00.000Z",
                }
        if method == "POST" and parts[:1] == ["bulk-bonus-payments"] and parts[2:] == ["pay"]:
            bulk = self.bulk.get(parts[1])
            if not bulk:
                return 404, _err(404, "Bulk bonus payment not found.")
            bulk["paid"] += 1
            return 202, None
        if (
            method == "POST"
            and parts[:1] == ["participant-groups"]
            and parts[2:] == ["participants"]
        ):
            if parts[1] not in self.groups:
                return 404, _err(404, "Participant group not found.")
            ids = body.get("participant_ids")
            if not isinstance(ids, list):
                return 400, _err(400, {"participant_ids": ["Expected a list."]})
            members = self.groups[parts[1]]
            members.extend(i for i in ids if i not in members)
            return 200, {"results": [{"participant_id": i} for i in members]}
        return 404, _err(404, "Not found.")

    def _list(self, study_id, page, path):
        if study_id not in self.studies:
            return 404, _err(404, "Study not found.")
        subs = [s for s in self.submissions.values() if s["study_id"] == study_id]
        chunk = subs[(page - 1) * self.page_size : page * self.page_size]
        more = page * self.page_size < len(subs)
        host, port = self._httpd.server_address[:2]
        nxt = f"http://{host}:{port}{path}?page={page + 1}" if more else None
        results = [_short(s) for s in chunk]
        return 200, {
            "results": results,
            "_links": {"self": {"href": path}, "next": {"href": nxt}},
            "meta": {"count": len(subs)},
        }

    def _transition(self, sub, body):
        action = body.get("action")
        if action not in ("APPROVE", "REJECT"):
            return 400, _err(400, {"action": ["Must be APPROVE or REJECT."]})
        if sub["status"] != "AWAITING REVIEW":
            return 400, _err(400, f"Submission is {sub['status']}, not AWAITING REVIEW.")
        if action == "REJECT":
            if body.get("rejection_category") not in CATEGORIES:
                return 400, _err(400, {"rejection_category": ["Not a valid choice."]})
            if len(body.get("message") or "") < 100:
                return 400, _err(400, {"message": ["Ensure this field has at least 100 chars."]})
        sub["status"] = "APPROVED" if action == "APPROVE" else "REJECTED"
        self._queue(
            "submission.status.change",
            {
                "resource_id": sub["id"],
                "event_type": "submission.status.change",
                "participant_id": sub["participant_id"],
                "status": sub["status"],
            },
        )
        return 200, _detail(sub)

    def _bonus_create(self, body):
        study_id, csv = body.get("study_id"), body.get("csv_bonuses")
        if study_id not in self.studies or not isinstance(csv, str):
            return 400, _err(400, "study_id and csv_bonuses are required.")
        in_study = {
            s["participant_id"] for s in self.submissions.values() if s["study_id"] == study_id
        }
        total = Decimal("0")
        rows = []
        for line in csv.splitlines():
            pid, amount = line.split(",")
            if pid not in in_study:
                return 400, _err(400, f"Participant {pid} has no submission in this study.")
            total += Decimal(amount)
            rows.append((pid, amount))
        bulk_id = f"bulk{next(self._ids):04d}"
        pence = int(total * 100)
        self.bulk[bulk_id] = {"rows": rows, "paid": 0}
        fees = pence // 3
        return 201, {
            "id": bulk_id,
            "study": study_id,
            "amount": pence,
            "fees": fees,
            "vat": 0,
            "total_amount": pence + fees,
        }


def _short(sub: dict) -> dict:
    """A submission as the study's submission list gives it (``SubmissionShort``)."""
    return {
        "id": sub["id"],
        "participant_id": sub["participant_id"],
        "status": sub["status"],
        "started_at": sub["started_at"],
        "completed_at": sub["completed_at"],
        "study_code": sub["study_code"],
        "has_siblings": False,
    }


def _detail(sub: dict) -> dict:
    """A submission as a transition answers it (``Submission``: ``participant``,
    ``entered_code``)."""
    return {
        "id": sub["id"],
        "study_id": sub["study_id"],
        "participant": sub["participant_id"],
        "status": sub["status"],
        "started_at": sub["started_at"],
        "completed_at": sub["completed_at"],
        "entered_code": sub["study_code"],
    }


def _err(status: int, detail) -> dict:
    return {
        "error": {"status": status, "error_code": status * 100, "title": "Error", "detail": detail}
    }
