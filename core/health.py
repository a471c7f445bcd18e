"""Health checks for load balancers and orchestrators: is this web process able to serve (its
database and broker answer), and are workers alive (each worker keeps a beacon fresh).

A worker's beacon is a small JSON record (its queues, pid, when it last beat) kept where the
workers' broker lives: a Redis key with a time to live when the broker is Redis (several
machines), else a file beside the embedded filesystem broker (one machine). A worker writes it
every :data:`BEACON_EVERY_S` from a side thread while it runs (``core.tasks``); a beacon older
than :data:`BEACON_TTL_S` is a dead worker.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

# How often a worker rewrites its health beacon (seconds); it counts as dead after 3 times this.
BEACON_EVERY_S = float(os.environ.get("WORKER_BEACON_SECONDS") or 10)
BEACON_TTL_S = 3 * BEACON_EVERY_S
PREFIX = "how2review:worker:"
logger = logging.getLogger(__name__)
TIMEOUT_S = 2.0


def _redis_url() -> str:
    url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
    return url if url.startswith(("redis://", "rediss://")) else ""


def _redis():
    import redis

    return redis.Redis.from_url(
        _redis_url(), socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S
    )


def _beacon_dir() -> Path:
    return Path(settings.BROKER_DIR) / "workers"


def _timed(check) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        detail = check() or {}
        ok = True
    except Exception as exc:  # noqa: BLE001 - a health check reports, never raises
        detail, ok = {"error": f"{type(exc).__name__}: {exc}"[:300]}, False
    return {"ok": ok, "ms": round(1000 * (time.perf_counter() - started), 1), **detail}


# --- web --------------------------------------------------------------------------------------


def web_health() -> dict[str, Any]:
    """The database answers a query and the broker is reachable (Redis ``PING``, or the
    filesystem broker's folder is writable)."""

    def database() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()

    def broker() -> dict[str, Any]:
        if _redis_url():
            client = _redis()
            try:
                client.ping()
            finally:
                client.close()
            return {"kind": "redis"}
        folder = Path(settings.BROKER_DIR)
        if not os.access(folder if folder.exists() else folder.parent, os.W_OK):
            raise OSError(f"{folder} is not writable")
        return {"kind": "filesystem"}

    checks = {"database": _timed(database), "broker": _timed(broker)}
    return {"ok": all(c["ok"] for c in checks.values()), "checks": checks}


# --- workers ----------------------------------------------------------------------------------


def beacon_write(*, name: str, queues: list[str]) -> None:
    """Record that worker ``name`` (consuming ``queues``) is alive now."""
    record = json.dumps(
        {"name": name, "queues": sorted(queues), "pid": os.getpid(), "at": time.time()}
    )
    if _redis_url():
        client = _redis()
        try:
            client.set(PREFIX + name, record, ex=int(BEACON_TTL_S))
        finally:
            client.close()
        return
    folder = _beacon_dir()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.tmp"
    tmp.write_text(record)
    tmp.replace(folder / name)


def beacon_clear(*, name: str) -> None:
    """A worker shutting down cleanly removes its beacon."""
    if _redis_url():
        client = _redis()
        try:
            client.delete(PREFIX + name)
        finally:
            client.close()
        return
    (_beacon_dir() / name).unlink(missing_ok=True)


def beacons() -> list[dict[str, Any]]:
    """The beacons of live workers (fresher than :data:`BEACON_TTL_S`)."""
    records: list[bytes | str] = []
    if _redis_url():
        client = _redis()
        try:
            keys = list(client.scan_iter(match=PREFIX + "*", count=500))
            records = [r for r in (client.mget(keys) if keys else []) if r]
        finally:
            client.close()
    elif _beacon_dir().is_dir():
        for path in _beacon_dir().iterdir():
            if not path.name.startswith("."):
                try:
                    records.append(path.read_text())
                except OSError:
                    continue
    now = time.time()
    alive = []
    for raw in records:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        age = now - float(record.get("at") or 0)
        if age <= BEACON_TTL_S:
            alive.append({**record, "age_s": round(age, 1)})
    return alive


def workers_health(*, queue: str | None = None) -> dict[str, Any]:
    """Live workers per queue; ok when at least one worker is alive (on ``queue`` if named).
    Worker names and pids are not shown: the endpoint is public."""
    result = _timed(lambda: {"workers": beacons()})
    if not result["ok"]:
        return {"ok": False, "error": result["error"], "queues": {}}
    per_queue: dict[str, int] = {}
    for worker in result["workers"]:
        for name in worker.get("queues") or []:
            per_queue[name] = per_queue.get(name, 0) + 1
    alive = per_queue.get(queue, 0) if queue else len(result["workers"])
    return {
        "ok": alive > 0,
        "workers": len(result["workers"]),
        "queues": dict(sorted(per_queue.items())),
        "oldest_beat_s": max((w["age_s"] for w in result["workers"]), default=None),
        **({"queue": queue} if queue else {}),
    }


class BeaconThread(threading.Thread):
    """Keeps a worker's beacon fresh until :meth:`stop`."""

    def __init__(self, *, name: str, queues: list[str]) -> None:
        super().__init__(name="worker-beacon", daemon=True)
        self.worker_name, self.queues = name, queues
        self._stop_event = threading.Event()

    def run(self) -> None:
        while True:
            try:
                beacon_write(name=self.worker_name, queues=self.queues)
            except Exception:  # a broker hiccup must not stop the beacon
                logger.warning("worker beacon not written", exc_info=True)
            if self._stop_event.wait(BEACON_EVERY_S):
                return

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)
        try:
            beacon_clear(name=self.worker_name)
        except Exception:  # shutting down anyway: the beacon expires by itself
            logger.warning("worker beacon not cleared", exc_info=True)


def default_worker_name() -> str:
    return f"{os.getpid()}@{socket.gethostname()}"
