"""A backend's ``concurrency`` as the endpoint's limit: at most that many requests in flight to
one endpoint + model + key name at any moment, across every lane, process and machine.

Two implementations with one interface (:meth:`acquire` → a holder token, :meth:`release`):

- :class:`LocalGate`: a semaphore per process (the embedded filesystem broker: one machine, and
  each worker process counts its own);
- :class:`SharedGate`: a lease-based semaphore in Redis. The holders of one key are a sorted set
  (member: a random holder token, score: when its lease ends, on Redis's clock); one Lua script
  drops the expired holders, checks the count against the caller's limit and adds the caller
  atomically. A process renews the leases it holds from one side thread (every second, or third of the
  lease if shorter), so a slow request keeps its slot; a killed worker stops renewing and its slots are
  reclaimed within the lease time (``LLM_CONCURRENCY_LEASE_SECONDS``, default 30). A release
  pushes a wake-up that one waiter blocks on (``BLPOP``), so a freed slot is taken at once.

The key is the backend's endpoint key (:meth:`benchmarks.llm.openai_compat.OpenAICompatBackend.
endpoint_key`, the same keying as the shared rate limits, :mod:`benchmarks.llm.ratelimit`);
each caller checks the count against its own ``concurrency`` (two judges of one endpoint with
16 and 4 share the slots, the second never holding more than 4 of them).
:func:`build_gate` picks: shared when a Redis URL is configured (``RATE_LIMIT_REDIS_URL``, by
default the Redis broker), per process otherwise. A Redis failure raises a retryable
:class:`benchmarks.llm.base.LLMError`: no request goes out uncounted.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Protocol

from benchmarks.llm.ratelimit import rate_limit_redis_url, redis_client

logger = logging.getLogger(__name__)

WAIT_SLICE_S = 0.1  # a waiter looks again at least this often (a wake-up may go to another)


def lease_s() -> float:
    """How long a holder's slot outlives its last renewal (a killed worker's slots come back
    after at most this long): ``LLM_CONCURRENCY_LEASE_SECONDS``, default 30."""
    try:
        from django.conf import settings

        if settings.configured:
            return float(getattr(settings, "LLM_CONCURRENCY_LEASE_SECONDS", 30))
    except ImportError:  # pragma: no cover - Django is a dependency
        pass
    return float(os.environ.get("LLM_CONCURRENCY_LEASE_SECONDS") or 30)


class Gate(Protocol):
    key: str
    limit: int

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> str | None: ...

    def try_acquire(self) -> str | None: ...

    def release(self, token: str) -> None: ...

    def release_many(self, tokens: list[str]) -> None: ...


# --- per process ----------------------------------------------------------------------------

_local: dict[str, tuple[threading.Condition, set[str]]] = {}
_local_lock = threading.Lock()


class LocalGate:
    """The per-process semaphore of a key (every backend of this process with the key shares
    it); each caller waits until fewer than its own ``limit`` hold it."""

    def __init__(self, *, key: str, limit: int) -> None:
        self.key, self.limit = key, max(1, int(limit))
        with _local_lock:
            if key not in _local:
                _local[key] = (threading.Condition(), set())
            self._cond, self._holders = _local[key]

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> str | None:
        """Block until a slot is free; the holder token, or None once ``should_stop()``."""
        token = uuid.uuid4().hex
        with self._cond:
            while len(self._holders) >= self.limit:
                if should_stop is not None and should_stop():
                    return None
                self._cond.wait(WAIT_SLICE_S)
            self._holders.add(token)
        return token

    def try_acquire(self) -> str | None:
        """A slot now, or None."""
        token = uuid.uuid4().hex
        with self._cond:
            if len(self._holders) >= self.limit:
                return None
            self._holders.add(token)
        return token

    def release(self, token: str) -> None:
        with self._cond:
            self._holders.discard(token)
            self._cond.notify()

    def release_many(self, tokens: list[str]) -> None:
        """Give back several slots at once (a writer's stored batch)."""
        if not tokens:
            return
        with self._cond:
            self._holders.difference_update(tokens)
            self._cond.notify(len(tokens))

    def held(self) -> int:
        with self._cond:
            return len(self._holders)


# --- shared through Redis -------------------------------------------------------------------

# KEYS: holders (zset). ARGV: token, limit, lease in ms. Returns 1 when taken, else 0.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
return 1
"""

# KEYS: holders, wake list. ARGV: token. Frees the slot and wakes one waiter.
_RELEASE = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('RPUSH', KEYS[2], '1')
  redis.call('LTRIM', KEYS[2], -64, -1)
  redis.call('PEXPIRE', KEYS[2], 60000)
end
return 0
"""

# KEYS: holders, wake list. ARGV: tokens... Frees each held slot and wakes one waiter per slot.
_RELEASE_MANY = """
local freed = 0
for i = 1, #ARGV do
  freed = freed + redis.call('ZREM', KEYS[1], ARGV[i])
end
if freed > 0 then
  for i = 1, math.min(freed, 64) do
    redis.call('RPUSH', KEYS[2], '1')
  end
  redis.call('LTRIM', KEYS[2], -64, -1)
  redis.call('PEXPIRE', KEYS[2], 60000)
end
return freed
"""

# KEYS: holders. ARGV: lease in ms, tokens... Pushes the leases of tokens still held.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
return 0
"""


class _Renewer:
    """One side thread per process renewing every lease this process holds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], set[str]] = {}  # (url, zset key) -> tokens
        self._thread: threading.Thread | None = None
        self._pid = 0

    def add(self, url: str, key: str, token: str) -> None:
        with self._lock:
            self._held.setdefault((url, key), set()).add(token)
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._pid = os.getpid()  # a forked child starts its own
                self._thread = threading.Thread(target=self._run, name="llm-gate", daemon=True)
                self._thread.start()

    def remove(self, url: str, key: str, token: str) -> None:
        with self._lock:
            tokens = self._held.get((url, key))
            if tokens is not None:
                tokens.discard(token)
                if not tokens:
                    del self._held[(url, key)]

    def _run(self) -> None:
        while True:
            time.sleep(max(0.2, min(1.0, lease_s() / 3)))  # one round trip a key a beat
            lease_ms = int(lease_s() * 1000)
            with self._lock:
                work = [(url, key, list(tokens)) for (url, key), tokens in self._held.items()]
            for url, key, tokens in work:
                try:
                    redis_client(url).eval(_RENEW, 1, key, lease_ms, *tokens)
                except Exception:  # noqa: BLE001 - Redis away: the leases lapse, by design
                    continue


_renewer = _Renewer()


class SharedGate:
    """The Redis semaphore of a key, shared by every process on every machine (see the
    module's docstring)."""

    PREFIX = "how2review:concurrency:"

    def __init__(self, *, redis_url: str, key: str, limit: int) -> None:
        self.redis_url, self.key, self.limit = redis_url, key, max(1, int(limit))
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        self._holders = f"{self.PREFIX}{digest}:holders"
        self._wake = f"{self.PREFIX}{digest}:wake"

    def _client(self):
        return redis_client(self.redis_url)

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> str | None:
        """Block until fewer than ``limit`` hold the key; the holder token, or None once
        ``should_stop()``."""
        import redis

        client = self._client()
        while True:
            token = self.try_acquire()
            if token is not None:
                return token
            if should_stop is not None and should_stop():
                return None
            try:
                client.blpop([self._wake], timeout=WAIT_SLICE_S)
            except redis.RedisError as exc:
                raise _unreachable(exc) from exc

    def try_acquire(self) -> str | None:
        """A slot now, or None (one round trip)."""
        import redis

        token = uuid.uuid4().hex
        lease_ms = int(lease_s() * 1000)
        try:
            taken = self._client().eval(_ACQUIRE, 1, self._holders, token, self.limit, lease_ms)
        except redis.RedisError as exc:
            raise _unreachable(exc) from exc
        if not taken:
            return None
        _renewer.add(self.redis_url, self._holders, token)
        return token

    def release(self, token: str) -> None:
        _renewer.remove(self.redis_url, self._holders, token)
        try:
            self._client().eval(_RELEASE, 2, self._holders, self._wake, token)
        except Exception:  # noqa: BLE001 - the lease lapses on its own
            logger.warning("concurrency limit: a slot of %s lapses on its own", self.key)

    def release_many(self, tokens: list[str]) -> None:
        """Give back several slots in one round trip (a writer's stored batch)."""
        if not tokens:
            return
        for token in tokens:
            _renewer.remove(self.redis_url, self._holders, token)
        try:
            self._client().eval(_RELEASE_MANY, 2, self._holders, self._wake, *tokens)
        except Exception:  # noqa: BLE001 - the leases lapse on their own
            logger.warning(
                "concurrency limit: %d slots of %s lapse on their own", len(tokens), self.key
            )

    def held(self) -> int:
        """Holders with a live lease (tests, the console)."""
        now_ms = int(time.time() * 1000)
        return int(self._client().zcount(self._holders, now_ms, "+inf"))


def _unreachable(exc: Exception) -> Exception:
    from benchmarks.llm.base import LLMError

    return LLMError(
        f"concurrency limit: Redis at RATE_LIMIT_REDIS_URL unreachable: {exc}", retryable=True
    )


def build_gate(*, key: str, limit: int, redis_url: str | None = None) -> LocalGate | SharedGate:
    """Shared through Redis when a URL is configured, else per process."""
    url = rate_limit_redis_url() if redis_url is None else redis_url
    if url:
        return SharedGate(redis_url=url, key=key, limit=limit)
    return LocalGate(key=key, limit=limit)
