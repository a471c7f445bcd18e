"""The tasks of core: the run engine's one chunk task (``core.run_chunk``, defined with the
engine, :func:`core.runs.engine.run_chunk`, which sends it; listed here for the workers); the
resume of orphaned runs (when a worker starts, and every ``RUN_ORPHAN_SCAN_SECONDS`` from Celery
beat, see ``config.celery``); and the worker's health beacon (:mod:`core.health`)."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from core.runs import engine
from core.runs.engine import run_chunk  # noqa: F401 - the engine's chunk task, listed for workers

logger = logging.getLogger(__name__)


@shared_task(name="core.runs_resume_orphans", ignore_result=True, expires=300)
def runs_resume_orphans() -> list[str]:
    """Requeue the runs whose worker is gone (a stale heartbeat). Run by beat periodically and
    by each worker when it starts; repeating it is harmless (an execution that finds a run held
    does nothing)."""
    resumed = engine.resume_orphans()
    if resumed:
        logger.warning("resumed orphaned runs: %s", ", ".join(resumed))
    return resumed


_beacon = None


@worker_ready.connect
def _on_worker_ready(sender=None, **_kwargs) -> None:
    global _beacon
    try:
        runs_resume_orphans.delay()
    except Exception:  # never keep a worker from starting
        logger.exception("could not enqueue the resume of orphaned runs")
    try:
        from core.health import BeaconThread, default_worker_name

        name = getattr(sender, "hostname", None) or default_worker_name()
        queues = list(sender.app.amqp.queues.consume_from) if sender is not None else []
        _beacon = BeaconThread(name=name, queues=queues)
        _beacon.start()
    except Exception:
        logger.exception("could not start the worker's health beacon")


@worker_shutdown.connect
def _on_worker_shutdown(**_kwargs) -> None:
    if _beacon is not None:
        _beacon.stop()
