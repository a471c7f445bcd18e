"""Thread-safe rate limiting for LLM backends: requests per minute and tokens per minute.

Pure Python (no Django). A token bucket per limit; ``acquire(tokens=n)`` blocks until both
buckets can pay. A limit of ``None`` or ``0`` means unlimited.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    """``capacity`` units refilled continuously at ``capacity / period`` per second."""

    def __init__(
        self,
        *,
        capacity: float,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = float(capacity)
        self.rate = self.capacity / period_s
        self._level = self.capacity
        self._clock = clock
        self._last = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._last) * self.rate)
        self._last = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` can be taken (0 when it can be now). Does not take."""
        self._refill()
        amount = min(amount, self.capacity)  # a request larger than the bucket waits for a full one
        if self._level >= amount:
            return 0.0
        return (amount - self._level) / self.rate

    def take(self, amount: float) -> None:
        self._refill()
        self._level -= min(amount, self.capacity)


class RateLimiter:
    """Requests/min and tokens/min limits shared by all threads of one backend."""

    def __init__(
        self,
        *,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._lock = threading.Lock()
        self._sleep = sleep
        self._requests = (
            TokenBucket(capacity=requests_per_minute, clock=clock) if requests_per_minute else None
        )
        self._tokens = (
            TokenBucket(capacity=tokens_per_minute, clock=clock) if tokens_per_minute else None
        )

    @property
    def enabled(self) -> bool:
        return self._requests is not None or self._tokens is not None

    def acquire(self, *, tokens: int = 0) -> float:
        """Block until one request of ``tokens`` tokens may go. Returns the seconds waited."""
        if not self.enabled:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                wait = 0.0
                if self._requests is not None:
                    wait = max(wait, self._requests.wait_time(1))
                if self._tokens is not None and tokens:
                    wait = max(wait, self._tokens.wait_time(tokens))
                if wait <= 0:
                    if self._requests is not None:
                        self._requests.take(1)
                    if self._tokens is not None and tokens:
                        self._tokens.take(tokens)
                    return waited
            self._sleep(wait)
            waited += wait
