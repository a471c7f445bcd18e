"""The side heartbeat of a chunk (:func:`core.runs.engine.execute`): a run's lease beaten from
a side thread while its chunk is worked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections

from core.runs.models import lease_seconds


@contextmanager
def side_heartbeat(lease: Any) -> Iterator[None]:
    """Beat ``lease`` (its ``renew()``) every third of its length from a side thread while a
    chunk is worked, so a chunk whose requests are all slow still shows its worker alive. The
    executor's own ``lease.beat()`` calls are what notice cancel and loss."""
    stop = threading.Event()
    interval = max(1.0, lease_seconds() / 3)

    def beat() -> None:
        try:
            while not stop.wait(interval):
                lease.renew()
        finally:
            connections.close_all()

    thread = threading.Thread(target=beat, name=f"run-heartbeat-{lease.run_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
