"""Settings of the annotation app, read from django.conf.settings with defaults.

- ``ANNOTATION_IDLE_TIMEOUT_SECONDS`` (60): no input for this long, or a hidden tab, stops the
  active-time clock of an item.
- ``ANNOTATION_HEARTBEAT_SECONDS`` (15): how often an open item page reports to the server.
- ``ANNOTATION_ASSIGNMENT_TIMEOUT_MINUTES`` (30): default for new studies; an assignment not
  seen for this long goes back to the pool.
- ``ANNOTATION_SWEEP_SECONDS`` (5): each web process looks for idle assignments to return to the
  pool at most this often (when a participant needs a new item).
- ``ANNOTATION_PROLIFIC_COMPLETION_URL``: the Prolific completion URL, ``{code}`` filled in.
- ``PROLIFIC_FEE_RATE`` (0.333): Prolific's platform fee as a share of rewards and bonuses,
  used by the cost preview shown before publishing (check your workspace's rate).
- ``PROLIFIC_WEBHOOK_URL``: the public https URL Prolific delivers webhooks to (empty: poll);
  ``PROLIFIC_WORKSPACE_ID``: the workspace whose webhook secret and subscriptions the app keeps.
- ``ANNOTATION_NEW_PARTICIPANTS_PER_IP`` (30): the default of a new study's setting
  ``new_participants_per_address``: at most this many new Prolific participants of the study from
  one client address per ``ANNOTATION_NEW_PARTICIPANTS_WINDOW_MINUTES`` (60) (0: no limit); more
  are refused (429, the page says why) and shown to the researcher. A lab study raises it.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings


def _get(name: str, default):
    return getattr(settings, name, default)


def idle_timeout_seconds() -> int:
    return int(_get("ANNOTATION_IDLE_TIMEOUT_SECONDS", 60))


def heartbeat_seconds() -> int:
    return int(_get("ANNOTATION_HEARTBEAT_SECONDS", 15))


def default_assignment_timeout_minutes() -> int:
    return int(_get("ANNOTATION_ASSIGNMENT_TIMEOUT_MINUTES", 30))


def sweep_seconds() -> float:
    return float(_get("ANNOTATION_SWEEP_SECONDS", 5))


def prolific_completion_url(code: str) -> str:
    template = _get(
        "ANNOTATION_PROLIFIC_COMPLETION_URL",
        "https://app.prolific.com/submissions/complete?cc={code}",
    )
    return template.format(code=code)


def new_participants_per_ip() -> int:
    return int(_get("ANNOTATION_NEW_PARTICIPANTS_PER_IP", 30))


def new_participants_window_minutes() -> int:
    return int(_get("ANNOTATION_NEW_PARTICIPANTS_WINDOW_MINUTES", 60))


def prolific_fee_rate() -> Decimal:
    return Decimal(str(_get("PROLIFIC_FEE_RATE", "0.333")))


def prolific_webhook_url() -> str:
    return str(_get("PROLIFIC_WEBHOOK_URL", "") or "").strip()


def prolific_reconcile_seconds() -> int:
    value = _get("PROLIFIC_RECONCILE_SECONDS", 900)
    return 900 if value is None else max(0, int(value))


def prolific_workspace_id() -> str:
    return str(_get("PROLIFIC_WORKSPACE_ID", "") or "").strip()
