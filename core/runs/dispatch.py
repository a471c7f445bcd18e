"""What sending a run's work needs, said before it is needed: a reachable broker (a launch whose
task cannot be sent leaves nothing half-started) and, for a command that waits, a worker on the
run's queue (else it says which queue and how to start one).

- :func:`require_broker` before a launch commits: the Redis broker answers ``PING``, or the
  embedded filesystem broker's folders exist (made here on first use). Otherwise
  :class:`BrokerUnavailable` — the API answers 503 naming the broker (``core.errors``) and the
  creating transaction rolls back.
- :func:`send_after_commit` sends once the transaction commits; a broker that fails in between
  is logged, never raised into the request that already committed: the run stays ``queued``
  and the orphan scan (:func:`core.runs.engine.resume_orphans`) sends it again once the broker
  is back.
- :func:`require_worker` (commands that wait, :func:`core.runs.progress.wait`): a live worker's
  beacon (:mod:`core.health`) lists the run's queue, else :class:`NoWorker` naming the queue and
  how to start one (``make worker``, or ``--inline``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)


class BrokerUnavailable(Exception):
    """The task broker cannot be reached: nothing was sent (the API's 503)."""


class NoWorker(Exception):
    """No live worker consumes the queue a run's work goes to."""


def broker_label() -> str:
    """The broker's URL without its password (for messages)."""
    url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
    if url.startswith("filesystem://"):
        return f"the embedded filesystem broker ({Path(settings.BROKER_DIR)})"
    parts = urlsplit(url)
    if parts.password:
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
        url = urlunsplit(parts._replace(netloc=netloc))
    return f"the task broker at {url}"


def filesystem_folders() -> list[Path]:
    """The embedded broker's folders (none for another broker)."""
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}) or {}
    if not str(getattr(settings, "CELERY_BROKER_URL", "")).startswith("filesystem://"):
        return []
    keys = ("data_folder_in", "data_folder_out", "processed_folder", "control_folder")
    return [Path(options[k]) for k in keys if options.get(k)]


def ensure_filesystem_broker() -> None:
    """Make the embedded broker's folders (a fresh install has none)."""
    for folder in filesystem_folders():
        folder.mkdir(parents=True, exist_ok=True)


def require_broker() -> None:
    """Raise :class:`BrokerUnavailable` unless a task could be sent now."""
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        return
    url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
    try:
        if url.startswith("filesystem://"):
            ensure_filesystem_broker()
            return
        if url.startswith(("redis://", "rediss://")):
            import redis

            client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
            try:
                client.ping()
            finally:
                client.close()
    except Exception as exc:
        raise BrokerUnavailable(
            f"{broker_label()} cannot be reached ({type(exc).__name__}: {exc}); nothing was "
            "started: try again once it is back"
        ) from exc


def send_after_commit(send: Callable[[], None], what: str) -> None:
    """``send()`` once the current transaction commits; a failure then is logged (the work
    stays queued and the orphan scan sends it again), never raised into the committed
    request."""

    def guarded() -> None:
        try:
            send()
        except Exception:
            logger.exception(
                "could not send %s to %s; the orphan scan resends it", what, broker_label()
            )

    transaction.on_commit(guarded)


def default_queue() -> str:
    from celery import current_app

    return str(current_app.conf.task_default_queue or settings.CELERY_TASK_DEFAULT_QUEUE)


def require_worker(queue: str | None) -> None:
    """Raise :class:`NoWorker` unless a live worker consumes ``queue`` (None: the default)."""
    from core.health import workers_health

    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        return
    name = queue or default_queue()
    health = workers_health(queue=name)
    if health.get("ok"):
        return
    gpu = name == getattr(settings, "CELERY_GPU_QUEUE", "gpu")
    start = (
        f"celery -A config worker -Q {name} -c 1 (a GPU worker)"
        if gpu
        else f"make worker (or: celery -A config worker -Q {name})"
    )
    reason = health.get("error") or "no live worker consumes it"
    raise NoWorker(
        f"no worker is working the queue {name!r} ({reason}): start one with `{start}`, or run "
        "the command with --inline to work it in this process"
    )
