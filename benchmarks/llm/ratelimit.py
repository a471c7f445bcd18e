"""Rate limiting for LLM backends: requests per minute and tokens per minute.

A token bucket per limit; ``acquire(tokens=n)`` blocks until both buckets can pay. A limit of
``None`` or ``0`` means unlimited. Two implementations with one interface (``enabled``,
``acquire``):

- :class:`RateLimiter`: in-process (thread-safe), for one process;
- :class:`SharedRateLimiter`: the buckets live in Redis and one Lua script refills, checks and
  takes from both atomically, on Redis's clock, so every worker process on every machine that
  uses the same *limit key* shares one budget.

:func:`build_rate_limiter` picks: shared when a Redis URL is configured (``RATE_LIMIT_REDIS_URL``,
by default the Redis Celery broker), in-process otherwise (the embedded filesystem broker).
No Django needed here: the URL is read from Django's settings when they are configured, else
from the environment.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from collections.abc import Callable
from typing import Any


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

    def try_acquire(self, *, tokens: int = 0) -> float:
        """One request of ``tokens`` tokens now if the budget allows (0.0), else the seconds to
        wait before asking again, nothing taken. Never blocks (an event loop's requests)."""
        if not self.enabled:
            return 0.0
        with self._lock:
            wait = 0.0
            if self._requests is not None:
                wait = max(wait, self._requests.wait_time(1))
            if self._tokens is not None and tokens:
                wait = max(wait, self._tokens.wait_time(tokens))
            if wait > 0:
                return wait
            if self._requests is not None:
                self._requests.take(1)
            if self._tokens is not None and tokens:
                self._tokens.take(tokens)
            return 0.0

    def acquire(self, *, tokens: int = 0) -> float:
        """Block until one request of ``tokens`` tokens may go. Returns the seconds waited."""
        waited = 0.0
        while (wait := self.try_acquire(tokens=tokens)) > 0:
            self._sleep(wait)
            waited += wait
        return waited


# KEYS: requests bucket, tokens bucket. ARGV: requests capacity (0 = none), tokens capacity
# (0 = none), tokens wanted, period in seconds. Each bucket is a hash {level, ts}; time is
# Redis's (TIME), so machines' clocks do not matter. Returns 0 when both were paid (taken),
# else the milliseconds to wait before asking again (nothing taken).
_TAKE_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local period = tonumber(ARGV[4])
local caps = {tonumber(ARGV[1]), tonumber(ARGV[2])}
local wants = {1, tonumber(ARGV[3])}
local levels = {0, 0}
local wait = 0
for i = 1, 2 do
  local cap = caps[i]
  if cap > 0 and wants[i] > 0 then
    local state = redis.call('HMGET', KEYS[i], 'level', 'ts')
    local level = tonumber(state[1])
    local ts = tonumber(state[2])
    if level == nil or ts == nil then
      level = cap
    else
      level = math.min(cap, level + math.max(0, now - ts) * cap / period)
    end
    levels[i] = level
    local want = math.min(wants[i], cap)
    if level < want then
      wait = math.max(wait, (want - level) * period / cap)
    end
  end
end
if wait > 0 then
  return math.ceil(wait * 1000)
end
for i = 1, 2 do
  local cap = caps[i]
  if cap > 0 and wants[i] > 0 then
    local level = levels[i] - math.min(wants[i], cap)
    redis.call('HSET', KEYS[i], 'level', tostring(level), 'ts', tostring(now))
    redis.call('PEXPIRE', KEYS[i], math.ceil(period * 2000))
  end
end
return 0
"""

_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def redis_client(url: str):
    """One client (one connection pool) per URL per process."""
    import redis

    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis.from_url(
                url, socket_timeout=10, socket_connect_timeout=5
            )
        return client


class SharedRateLimiter:
    """Requests/min and tokens/min limits shared through Redis by every process using ``key``.

    Same interface as :class:`RateLimiter`. A Redis failure raises
    :class:`benchmarks.llm.base.LLMError` (retryable): no request goes out unmetered.
    """

    PREFIX = "how2review:ratelimit:"

    def __init__(
        self,
        *,
        redis_url: str,
        key: str,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        period_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.redis_url = redis_url
        self.key = key
        self.requests_per_minute = float(requests_per_minute or 0)
        self.tokens_per_minute = float(tokens_per_minute or 0)
        self.period_s = period_s
        self._sleep = sleep
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        self._keys = [f"{self.PREFIX}{digest}:requests", f"{self.PREFIX}{digest}:tokens"]
        self._script = None

    @property
    def enabled(self) -> bool:
        return bool(self.requests_per_minute or self.tokens_per_minute)

    def _take(self, tokens: int) -> float:
        """Seconds to wait (0: paid now)."""
        if self._script is None:
            self._script = redis_client(self.redis_url).register_script(_TAKE_SCRIPT)
        args = [self.requests_per_minute, self.tokens_per_minute, int(tokens), self.period_s]
        return int(self._script(keys=self._keys, args=args)) / 1000.0

    def try_acquire(self, *, tokens: int = 0) -> float:
        """One request of ``tokens`` tokens now if the budget allows (0.0), else the seconds to
        wait before asking again, nothing taken: one round trip, never waits."""
        if not self.enabled:
            return 0.0
        import redis

        from benchmarks.llm.base import LLMError

        try:
            return self._take(tokens)
        except redis.RedisError as exc:
            raise LLMError(
                f"rate limiter: Redis at RATE_LIMIT_REDIS_URL unreachable: {exc}",
                retryable=True,
            ) from exc

    def acquire(self, *, tokens: int = 0) -> float:
        """Block until one request of ``tokens`` tokens may go. Returns the seconds waited."""
        waited = 0.0
        while (wait := self.try_acquire(tokens=tokens)) > 0:
            # up to 1% more, at random: waiters told the same moment (every thread of every
            # process sharing the bucket) do not ask again in lockstep, where the same one wins
            wait *= 1 + random.random() / 100
            self._sleep(wait)
            waited += wait
        return waited


def rate_limit_redis_url() -> str:
    """Where shared buckets live: Django's ``RATE_LIMIT_REDIS_URL`` setting when settings are
    configured, else the environment (``RATE_LIMIT_REDIS_URL``, then a ``redis://`` /
    ``rediss://`` ``CELERY_BROKER_URL``). Empty (or ``off``): limits are per process."""
    try:
        from django.conf import settings

        if settings.configured:
            return str(getattr(settings, "RATE_LIMIT_REDIS_URL", "") or "")
    except ImportError:  # pragma: no cover - Django is a dependency
        pass
    url = os.environ.get("RATE_LIMIT_REDIS_URL", "")
    if not url:
        broker = os.environ.get("CELERY_BROKER_URL", "")
        url = broker if broker.startswith(("redis://", "rediss://")) else ""
    return "" if url.strip().lower() == "off" else url


def build_rate_limiter(
    *,
    key: str,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    redis_url: str | None = None,
) -> RateLimiter | SharedRateLimiter:
    """The limiter a backend uses: shared through Redis when a URL is configured (every worker
    with the same ``key`` shares one budget), else in-process."""
    url = rate_limit_redis_url() if redis_url is None else redis_url
    if url and (requests_per_minute or tokens_per_minute):
        return SharedRateLimiter(
            redis_url=url,
            key=key,
            requests_per_minute=requests_per_minute,
            tokens_per_minute=tokens_per_minute,
        )
    return RateLimiter(requests_per_minute=requests_per_minute, tokens_per_minute=tokens_per_minute)
