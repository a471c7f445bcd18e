"""A responder for :class:`tests.support.llm_server.LLMTestServer` that counts the requests it
holds at once: it sleeps ``latency_s`` itself (set the server's own ``latency_s`` to 0), so the
server sees each request in flight for that long, and it records the peak.

Usage::

    counter = InFlight(reply=lambda req: "ok", latency_s=0.2)
    llm_server.responder = counter
    ...
    assert counter.peak <= 4
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class InFlight:
    def __init__(self, *, reply: Callable[[Any], Any], latency_s: float = 0.1) -> None:
        self.reply, self.latency_s = reply, latency_s
        self.now = self.peak = self.total = 0
        self._lock = threading.Lock()

    def __call__(self, req):
        with self._lock:
            self.now += 1
            self.total += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.latency_s)
            return self.reply(req)
        finally:
            with self._lock:
                self.now -= 1

    def reset(self) -> None:
        with self._lock:
            self.peak = self.now
            self.total = 0
