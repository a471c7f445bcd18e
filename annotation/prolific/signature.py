"""Prolific's webhook request signatures (pure functions, no Django).

As documented (API reference, Webhooks → Verifying): every hook request carries
``X-Prolific-Request-Signature`` and ``X-Prolific-Request-Timestamp`` (a UNIX timestamp of when
it was sent); the signature is the base64 of the HMAC-SHA256, keyed with the workspace's
secret, of the timestamp followed by the request body. Here the body is the raw bytes as
received: nothing is parsed before the signature holds."""

from __future__ import annotations

import base64
import hashlib
import hmac
import math

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TIME_HEADER = "X-Timestamp"


def sign(*, secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def refusal(
    *, secret: str, signature: str, timestamp: str, body: bytes, now: float, tolerance: float
) -> str:
    """Why this request is not Prolific's, or ``""`` when its signature holds and it is fresh.
    Stale: sent more than ``tolerance`` seconds from ``now`` (either way), so a captured
    request cannot be replayed later."""
    if not signature or not timestamp:
        return "unsigned (no signature or timestamp header)"
    try:
        sent = float(timestamp)
    except ValueError:
        return "the timestamp is not a UNIX time"
    if not math.isfinite(sent):
        return "the timestamp is not a UNIX time"
    if abs(now - sent) > tolerance:
        return f"stale: sent {int(now - sent)} s ago (more than {int(tolerance)} s)"
    expected = sign(secret=secret, timestamp=timestamp, body=body)
    if not hmac.compare_digest(expected.encode(), signature.strip().encode()):
        return "bad signature"
    return ""
