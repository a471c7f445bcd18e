"""The Celery application. Broker and queues come from settings (CELERY_* names).

On Redis the broker redelivers a message nobody acknowledged within its visibility timeout
(tasks acknowledge late, when they end). The timeout is set here from the longest a run's chunk
may take (:func:`visibility_timeout`), so a chunk still running is never handed to a second
worker for being slow; a copy delivered anyway (a worker that lost its connection) finds the
run's lease held and calls no model (:mod:`core.runs.engine`). Periodic work (beat): the resume
of orphaned runs every ``RUN_ORPHAN_SCAN_SECONDS``; the Prolific poll every
``PROLIFIC_POLL_SECONDS`` (it does nothing while webhooks are configured).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("how2review")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name) or default)
    except ValueError:
        return default


def visibility_timeout() -> float:
    """``CELERY_VISIBILITY_TIMEOUT``, else twice the longest chunk (``RUN_CHUNK_SECONDS``, after
    which a chunk takes no new work) plus the lease (``RUN_LEASE_SECONDS``: a chunk's requests in
    flight finish) — 660 s by default, well past any chunk, short enough that the message of a
    worker that died is redelivered within minutes."""
    explicit = os.environ.get("CELERY_VISIBILITY_TIMEOUT")
    if explicit:
        return float(explicit)
    return 2 * _seconds("RUN_CHUNK_SECONDS", 300) + _seconds("RUN_LEASE_SECONDS", 60)


@app.on_after_configure.connect
def _configure_broker(sender=None, **_kwargs) -> None:
    """Once the settings are read (not at import: ``config.settings`` imports this package)."""
    url = str(app.conf.broker_url or "")
    if url.startswith(("redis://", "rediss://", "sentinel://")):
        options = dict(app.conf.broker_transport_options or {})
        options.setdefault("visibility_timeout", visibility_timeout())
        # look for unacknowledged messages past the timeout every N s (kombu: 10 s x 10)
        restore = os.environ.get("CELERY_UNACKED_RESTORE_INTERVAL")
        if restore:
            options.setdefault("unacked_restore_interval", int(restore))
            options.setdefault("unacked_restore_throttle", 1)
        app.conf.broker_transport_options = options
    elif url.startswith("filesystem://"):
        # the embedded broker's folders, made on first use (a fresh install has none)
        options = app.conf.broker_transport_options or {}
        for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
            if options.get(key):
                os.makedirs(options[key], exist_ok=True)
    app.conf.beat_schedule = {
        "resume-orphaned-runs": {
            "task": "core.runs_resume_orphans",
            "schedule": _seconds("RUN_ORPHAN_SCAN_SECONDS", 60),
        },
        # provider batches of runs in batch mode (benchmarks.services.batch_runs.poll)
        "poll-provider-batches": {
            "task": "benchmarks.batches_poll",
            "schedule": _seconds("BATCH_POLL_SECONDS", 60),
        },
        # Prolific submission and study statuses, polled when no webhook URL is set
        "poll-prolific": {
            "task": "annotation.prolific_poll",
            "schedule": _seconds("PROLIFIC_POLL_SECONDS", 60),
        },
        **(app.conf.beat_schedule or {}),
    }
