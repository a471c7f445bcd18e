"""Prolific webhooks: the workspace secret, subscriptions (subscribe, confirm, list, remove),
and receiving deliveries.

Subscribing (admins): the workspace's secret is created when it has none, then each followed
event type is subscribed for ``PROLIFIC_WEBHOOK_URL`` (a public ``https`` URL the operator
sets) and confirmed with the ``X-Hook-Secret`` Prolific answered, as documented (Webhooks →
Subscribing). Every call is logged (:class:`~annotation.models.ProlificCall`, no study).

The secret is never stored in the database: ``PROLIFIC_WEBHOOK_SECRET`` when the operator sets
it, else the value Prolific gives (created or listed with the API token), kept in the cache for
an hour and read again from Prolific (a logged call, at most once a minute) when missing or
when a signature does not hold with it (a secret replaced meanwhile).

Receiving: the signature is checked over the raw body before anything is parsed
(:mod:`annotation.prolific.signature`); a refused delivery is kept with its reason and changes
nothing; an accepted one is stored once per ``X-Event-ID`` (a replay changes nothing) and
applied by a task after the answer."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from annotation import conf
from annotation.models import ProlificCall, ProlificDelivery
from annotation.prolific import signature
from annotation.prolific.client import ProlificClient, ProlificError
from annotation.services.prolific import logged_call
from annotation.tasks import prolific_delivery_apply
from core.roles import is_admin

log = logging.getLogger(__name__)

EVENT_TYPES = ("submission.status.change", "study.status.change")
_CACHE_KEY = "annotation:prolific:webhook-secret"
_CACHE_SECONDS = 3600
_READ_EVERY = 60
MAX_BODY = 64 * 1024


webhook_url = conf.prolific_webhook_url
workspace_id = conf.prolific_workspace_id


def _checked_config() -> tuple[str, str]:
    url, workspace = webhook_url(), workspace_id()
    if not url:
        raise ValidationError({"PROLIFIC_WEBHOOK_URL": "Set the public https URL Prolific calls."})
    if not url.startswith("https://"):
        raise ValidationError(
            {"PROLIFIC_WEBHOOK_URL": f"{url!r} is not https: Prolific only calls https URLs."}
        )
    if not workspace:
        raise ValidationError({"PROLIFIC_WORKSPACE_ID": "Set the Prolific workspace id."})
    return url, workspace


def _log(user, action, target, summary, call, client):
    return logged_call(
        study=None,
        user=user,
        action=action,
        target=target,
        summary=summary,
        call=call,
        client=client,
    )


# --- the secret ----------------------------------------------------------------------------


def webhook_secret(*, refresh: bool = False, client=None) -> str:
    """The secret that signs deliveries ("" when none is known and none can be read)."""
    # The workspace's webhook secret, pinned by the operator; empty: read from Prolific.
    pinned = os.environ.get("PROLIFIC_WEBHOOK_SECRET", "")
    if pinned:
        return pinned
    cached = cache.get(_CACHE_KEY)
    if cached and not refresh:
        return cached
    workspace = workspace_id()
    # at most one read a minute: badly signed requests cannot make the app call Prolific
    if not workspace or not cache.add(_CACHE_KEY + ":read", 1, _READ_EVERY):
        return cached or ""
    try:
        found = _log(
            None,
            ProlificCall.Action.HOOK_SECRET,
            workspace,
            "GET /hooks/secrets/ (to check a delivery's signature)",
            lambda c: c.list_secrets(workspace),
            client,
        )
    except ProlificError as exc:
        log.warning("Prolific webhook secret could not be read: %s", exc)
        return ""
    value = next((s.get("value", "") for s in found if s.get("value")), "")
    if value:
        cache.set(_CACHE_KEY, value, _CACHE_SECONDS)
    return value or cached or ""


def _secret_ensure(*, user, workspace: str, client) -> None:
    secrets = _log(
        user,
        ProlificCall.Action.HOOK_SECRET,
        workspace,
        "GET /hooks/secrets/",
        lambda c: c.list_secrets(workspace),
        client,
    )
    value = next((s.get("value", "") for s in secrets if s.get("value")), "")
    if not value:
        created = _log(
            user,
            ProlificCall.Action.HOOK_SECRET,
            workspace,
            "POST /hooks/secrets/ (create)",
            lambda c: c.create_secret(workspace),
            client,
        )
        value = created.get("value", "")
    if value:
        cache.set(_CACHE_KEY, value, _CACHE_SECONDS)


# --- subscriptions -------------------------------------------------------------------------


def subscriptions_list(*, user, client=None) -> list[dict]:
    if not is_admin(user):
        raise PermissionDenied("Only admins manage Prolific webhooks.")
    workspace = workspace_id()
    if not workspace:
        raise ValidationError({"PROLIFIC_WORKSPACE_ID": "Set the Prolific workspace id."})
    return _log(
        user,
        ProlificCall.Action.HOOK_LIST,
        workspace,
        "GET /hooks/subscriptions/",
        lambda c: c.list_subscriptions(workspace),
        client,
    )


def subscriptions_create(*, user, client=None) -> list[str]:
    """Subscribe the configured URL to each followed event type not yet subscribed, and
    confirm each; returns the event types newly subscribed."""
    if not is_admin(user):
        raise PermissionDenied("Only admins manage Prolific webhooks.")
    url, workspace = _checked_config()
    client = client or ProlificClient()
    _secret_ensure(user=user, workspace=workspace, client=client)
    existing = subscriptions_list(user=user, client=client)
    have = {
        s.get("event_type")
        for s in existing
        if s.get("target_url") == url and s.get("is_enabled", True)
    }
    done = []
    for event_type in EVENT_TYPES:
        if event_type in have:
            continue
        detail, hook_secret = _log(
            user,
            ProlificCall.Action.HOOK_SUBSCRIBE,
            event_type,
            f"POST /hooks/subscriptions/ {event_type} → {url}",
            lambda c, e=event_type: c.create_subscription(
                workspace_id=workspace, event_type=e, target_url=url
            ),
            client,
        )
        sub_id = str(detail.get("id", ""))
        if not sub_id or not hook_secret:
            raise ProlificError("Prolific created the subscription without an id or X-Hook-Secret.")
        _log(
            user,
            ProlificCall.Action.HOOK_CONFIRM,
            sub_id,
            f"confirm {event_type}",
            lambda c, s=sub_id, h=hook_secret: c.confirm_subscription(s, h),
            client,
        )
        done.append(event_type)
    return done


def subscription_delete(*, user, subscription_id: str, client=None) -> None:
    if not is_admin(user):
        raise PermissionDenied("Only admins manage Prolific webhooks.")
    subscription_id = (subscription_id or "").strip()
    if not subscription_id or len(subscription_id) > 64 or not subscription_id.isalnum():
        raise ValidationError({"subscription": "Choose a subscription."})
    _log(
        user,
        ProlificCall.Action.HOOK_DELETE,
        subscription_id,
        f"DELETE /hooks/subscriptions/{subscription_id}/",
        lambda c: c.delete_subscription(subscription_id),
        client,
    )


# --- receiving -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Received:
    status: int  # the HTTP answer
    message: str
    delivery: ProlificDelivery | None = None


def _refused(status: int, reason: str, headers, payload: dict | None = None) -> Received:
    payload = payload or {}
    delivery = ProlificDelivery.objects.create(
        event_id=str(headers.get(signature.EVENT_ID_HEADER, ""))[:64],
        event_type=str(payload.get("event_type", ""))[:64],
        resource_id=str(payload.get("resource_id", ""))[:64],
        accepted=False,
        reason=reason[:200],
    )
    log.warning("Prolific webhook refused: %s", reason)
    return Received(status, f"Refused: {reason}.", delivery)


def _event_time(headers, fallback: float) -> datetime:
    raw = headers.get(signature.EVENT_TIME_HEADER) or ""
    try:
        return datetime.fromtimestamp(float(raw), tz=UTC)
    except (ValueError, OverflowError, OSError):  # missing, not a number, out of range
        return datetime.fromtimestamp(fallback, tz=UTC)


def delivery_receive(*, headers, body: bytes, now: float | None = None) -> Received:
    """Check and store one delivery; the caller answers ``status`` at once."""
    now = time.time() if now is None else now
    if len(body) > MAX_BODY:
        return _refused(413, f"body over {MAX_BODY} bytes", headers)
    secret = webhook_secret()
    if not secret:
        return _refused(403, "no webhook secret is known (subscribe from the app first)", headers)
    check = {
        "signature": headers.get(signature.SIGNATURE_HEADER, ""),
        "timestamp": headers.get(signature.TIMESTAMP_HEADER, ""),
        "body": body,
        "now": now,
        "tolerance": float(getattr(settings, "PROLIFIC_WEBHOOK_TOLERANCE_SECONDS", 300)),
    }
    reason = signature.refusal(secret=secret, **check)
    if reason == "bad signature" and not os.environ.get("PROLIFIC_WEBHOOK_SECRET"):
        fresh = webhook_secret(refresh=True)  # the secret may have been replaced
        if fresh and fresh != secret:
            reason = signature.refusal(secret=fresh, **check)
    if reason:
        return _refused(401, reason, headers)
    try:
        payload = json.loads(body)
    except ValueError:
        return _refused(400, "the body is not JSON", headers)
    if not isinstance(payload, dict) or not payload.get("event_type"):
        return _refused(400, "the body names no event_type", headers)
    event_id = str(headers.get(signature.EVENT_ID_HEADER, "")).strip()
    if not event_id or len(event_id) > 64:
        return _refused(400, "no usable X-Event-ID header", headers, payload)
    try:
        with transaction.atomic():
            delivery = ProlificDelivery.objects.create(
                event_id=event_id,
                event_type=str(payload.get("event_type"))[:64],
                resource_id=str(payload.get("resource_id", ""))[:64],
                status=str(payload.get("status", ""))[:32],
                sent_at=_event_time(headers, float(check["timestamp"])),
                accepted=True,
            )
            transaction.on_commit(lambda: _enqueue(delivery.pk))
    except IntegrityError:
        return Received(200, "Already received; nothing changed.")
    return Received(202, "Accepted.", delivery)


def _enqueue(delivery_id: int) -> None:
    """Send the applying task (:func:`annotation.services.prolific_events.delivery_apply`)."""
    prolific_delivery_apply.apply_async(args=[delivery_id])
