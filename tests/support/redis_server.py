"""A Redis server of the test's own (``redis-server`` on a free loopback port, no persistence),
to stop and start around a launch without touching the shared Redis other tests use; and a
switch of this process's Celery app and settings to it as the broker.

Usage::

    with OwnRedis() as redis_server, broker_at(redis_server.url, settings):
        redis_server.stop()   # the broker is down: launches answer 503
        redis_server.start()  # back, empty: what it held is lost
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnRedis:
    def __init__(self) -> None:
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> OwnRedis:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is needed for these tests"
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping()
                return self
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def __enter__(self) -> OwnRedis:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextmanager
def broker_at(url: str, settings) -> Iterator[None]:
    """This process sends tasks to ``url`` (settings and the Celery app) until the block ends;
    workers started meanwhile (tests.support.worker) read the settings' URL."""
    from config.celery import app

    previous = app.conf.broker_url
    settings.CELERY_BROKER_URL = url
    app.conf.broker_url = url
    app.close()  # the connection pool is made again for the new URL
    try:
        yield
    finally:
        app.conf.broker_url = previous
        app.close()
