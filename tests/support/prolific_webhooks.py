"""The webhook side of the local Prolific server (mixed into
:class:`tests.support.prolific_server.ProlificTestServer`), in the documented shapes
(API reference → Webhooks): ``GET /hooks/event-types/``, one secret per workspace
(``GET``/``POST /hooks/secrets/``), subscriptions that must be confirmed with the
``X-Hook-Secret`` the create call answered (``POST /hooks/subscriptions/``, ``POST
/hooks/subscriptions/{id}/`` with ``{"secret"}``, ``GET``, ``DELETE``), https targets only.

Deliveries are signed as Prolific signs them: ``X-Prolific-Request-Signature`` = base64 of
HMAC-SHA256(secret, timestamp + body), ``X-Prolific-Request-Timestamp``, plus ``X-Event-ID``
and ``X-Timestamp``. A confirmed subscription receives every event of its type; ``routes``
maps a public https target to the local http address that stands behind it (the operator's
TLS proxy). Tests script faults: a wrong secret, a stale timestamp, no signature, a replay
(the same delivery again), holding events to deliver them in another order."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field

import httpx

EVENT_TYPES = [
    {"event_type": "study.status.change", "description": "A study's status changed."},
    {"event_type": "submission.status.change", "description": "A submission's status changed."},
    {"event_type": "study.progress.change", "description": "A study's progress changed."},
]


@dataclass
class Delivery:
    target: str
    headers: dict
    body: bytes
    answer: int = 0
    answer_text: str = ""
    sent_at: float = field(default_factory=time.monotonic)


class WebhooksMixin:
    def _hooks_init(self) -> None:
        self.hook_secrets: dict[str, dict] = {}  # workspace → {id, value, workspace_id}
        self.subscriptions: dict[str, dict] = {}
        self.pending_confirm: dict[str, str] = {}  # subscription id → X-Hook-Secret
        self.routes: dict[str, str] = {}  # public https target → local URL
        self.deliveries: list[Delivery] = []
        self.held: list[tuple[str, dict, float]] | None = None  # events kept for later

    # --- the API -----------------------------------------------------------------------------
    def _route_hooks(self, method, parts, query, body):
        """(status, payload, extra headers) or None when the path is not a hooks path."""
        if parts[:1] != ["hooks"]:
            return None
        if method == "GET" and parts == ["hooks", "event-types"]:
            return 200, {"results": EVENT_TYPES}, {}
        if parts == ["hooks", "secrets"]:
            if method == "GET":
                ws = (query.get("workspace_id") or [""])[0]
                found = [s for w, s in self.hook_secrets.items() if not ws or w == ws]
                return 200, {"results": found}, {}
            if method == "POST":
                ws = body.get("workspace_id")
                if not ws:
                    return 400, _err(400, {"workspace_id": ["This field is required."]}), {}
                secret = {"id": uuid.uuid4().hex[:24], "value": secrets.token_urlsafe(32)}
                self.hook_secrets[ws] = {**secret, "workspace_id": ws}
                return 201, self.hook_secrets[ws], {}
        if parts == ["hooks", "subscriptions"]:
            if method == "GET":
                ws = (query.get("workspace_id") or [""])[0]
                found = [
                    s for s in self.subscriptions.values() if not ws or s["workspace_id"] == ws
                ]
                return 200, {"results": found}, {}
            if method == "POST":
                return self._subscribe(body)
        if parts[:2] == ["hooks", "subscriptions"] and len(parts) == 3:
            sub = self.subscriptions.get(parts[2])
            if sub is None:
                return 404, _err(404, "Subscription not found."), {}
            if method == "GET":
                return 200, sub, {}
            if method == "DELETE":
                del self.subscriptions[parts[2]]
                return 204, None, {}
            if method == "POST":
                if body.get("secret") != self.pending_confirm.get(parts[2]):
                    return 400, _err(400, "The secret does not match this subscription."), {}
                self.pending_confirm.pop(parts[2])
                sub["is_enabled"] = True
                return 200, sub, {}
        return 404, _err(404, "Not found."), {}

    def _subscribe(self, body):
        ws, event_type, target = (body.get(k) for k in ("workspace_id", "event_type", "target_url"))
        if not ws or not event_type or not target:
            return 400, _err(400, "workspace_id, event_type and target_url are required."), {}
        if ws not in self.hook_secrets:
            return 400, _err(400, "Create a secret for the workspace first."), {}
        if event_type not in {e["event_type"] for e in EVENT_TYPES}:
            return 400, _err(400, {"event_type": ["Not a valid event type."]}), {}
        if not str(target).startswith("https://") or "localhost" in target:
            return 400, _err(400, {"target_url": ["Must be a public https:// URL."]}), {}
        sub_id = uuid.uuid4().hex[:24]
        self.subscriptions[sub_id] = {
            "id": sub_id,
            "event_type": event_type,
            "target_url": target,
            "workspace_id": ws,
            "is_enabled": False,  # until confirmed
        }
        hook_secret = secrets.token_hex(16)
        self.pending_confirm[sub_id] = hook_secret
        return 201, {"results": [self.subscriptions[sub_id]]}, {"X-Hook-Secret": hook_secret}

    # --- deliveries --------------------------------------------------------------------------
    def emit(self, event_type: str, payload: dict) -> list[Delivery]:
        """Deliver an event to every confirmed subscription of its type (now, or later when
        deliveries are held). Never call while holding the server's lock."""
        stamp = time.time()
        if self.held is not None:
            self.held.append((event_type, payload, stamp))
            return []
        return [
            self.deliver(sub["target_url"], sub["workspace_id"], payload, event_time=stamp)
            for sub in list(self.subscriptions.values())
            if sub["event_type"] == event_type and sub["is_enabled"]
        ]

    def hold(self) -> None:
        self.held = []

    def release(self, order=None) -> list[Delivery]:
        """Deliver the held events, in ``order`` (indexes) or as they came."""
        held, self.held = self.held or [], None
        out = []
        for i in order if order is not None else range(len(held)):
            event_type, payload, stamp = held[i]
            for sub in list(self.subscriptions.values()):
                if sub["event_type"] == event_type and sub["is_enabled"]:
                    out.append(
                        self.deliver(
                            sub["target_url"], sub["workspace_id"], payload, event_time=stamp
                        )
                    )
        return out

    def deliver(
        self,
        target: str,
        workspace: str,
        payload: dict,
        *,
        event_time: float | None = None,
        event_id: str | None = None,
        secret: str | None = None,
        timestamp: str | None = None,
        signature: str | None = None,
        unsigned: bool = False,
    ) -> Delivery:
        """POST one signed delivery; the keyword arguments script what a forger would send."""
        body = json.dumps(payload).encode()
        stamp = timestamp if timestamp is not None else str(int(time.time()))
        key = secret if secret is not None else self.hook_secrets[workspace]["value"]
        sig = (
            signature
            or base64.b64encode(
                hmac.new(key.encode(), stamp.encode() + body, hashlib.sha256).digest()
            ).decode()
        )
        headers = {
            "Content-Type": "application/json",
            "X-Event-ID": event_id or uuid.uuid4().hex,
            "X-Timestamp": str(event_time if event_time is not None else time.time()),
        }
        if not unsigned:
            headers["X-Prolific-Request-Signature"] = sig
            headers["X-Prolific-Request-Timestamp"] = stamp
        return self.send(Delivery(target=target, headers=headers, body=body))

    def send(self, delivery: Delivery) -> Delivery:
        """POST (or POST again: a replay) a delivery to its target's local address."""
        url = self.routes.get(delivery.target, delivery.target)
        sent = Delivery(delivery.target, dict(delivery.headers), delivery.body)
        try:
            answer = httpx.post(url, content=sent.body, headers=sent.headers, timeout=30)
            sent.answer, sent.answer_text = answer.status_code, answer.text[:200]
        except httpx.HTTPError as exc:
            sent.answer_text = type(exc).__name__
        self.deliveries.append(sent)
        return sent


def _err(status: int, detail) -> dict:
    return {
        "error": {"status": status, "error_code": status * 100, "title": "Error", "detail": detail}
    }
