"""A backend's ``concurrency`` as the endpoint's limit: at most that many requests in flight to
one endpoint + model + key name at any moment, across every lane, process and machine.

Two implementations with one interface (:class:`Gate`):

- :class:`LocalGate`: a semaphore per process (the embedded filesystem broker: one machine, and
  each worker process counts its own);
- :class:`SharedGate`: a lease-based semaphore in Redis. The holders of one key are a sorted set
  (member: a random holder token, score: when its lease ends, on Redis's clock); one Lua script
  drops the expired holders, checks the count against the caller's limit and adds the caller's
  tokens atomically. A process renews every lease it holds from one side thread (one round trip
  per Redis a beat for all its keys: every quarter of the lease, at most 5 s), so a slow request
  keeps its slot; a killed worker stops renewing and its slots are reclaimed within the lease
  time (``LLM_CONCURRENCY_LEASE_SECONDS``, default 30).

Taking and giving back slots:

- ``acquire_many(n, should_stop=None, timeout=None)`` → a list of holder tokens: up to ``n``
  slots that are free now (never more than ``limit`` minus those held), taken in **one** round
  trip; when none is free it **blocks** until at least one is: on Redis (``BLPOP`` on the key's
  wake list, which a release fills with one wake-up per freed slot; woken callers are served
  first come, first served across processes), looking again at the latest when the first
  holder's lease ends (a killed worker's slot) and every :data:`WAIT_S` (a wake-up taken by a
  caller with a smaller limit, Redis restarted). Returns ``[]`` once ``should_stop()`` is true
  (asked before each wait, so at most :data:`WAIT_S` late) or after ``timeout`` seconds
  (``timeout=0``: never waits, a try). Each token is given back on its own (``release``) or
  with others (``release_many``, one round trip), by any thread of the process that took it.
  A wave of requests takes its slots at once and sends as many as it got.
- ``acquire(should_stop)`` → one token or None: ``acquire_many(1)``; ``try_acquire()`` → one
  token now or None: ``acquire_many(1, timeout=0)``.
- a release frees the slots and wakes one waiter per freed slot; wake-ups beyond the free
  slots are dropped (a waiter is never woken for a slot that is already gone).
- ``release_if_wanted(tokens)`` → whether it gave them back: only when another caller found
  the gate full since the last such give-back (a failed take leaves a mark, :data:`WANTED_MS`
  long); else the caller keeps them (one round trip either way). A feed that keeps a stored
  reply's slot for its next request gives it up this way when another process waits for one.

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

WAIT_S = 1.0  # a blocked waiter looks again at least this often (and asks should_stop)
LOCAL_WAIT_S = 0.1  # the same for the per-process gate (no round trip: a lock and a clock)
WANTED_MS = 1000  # a failed take marks the gate wanted this long (a blocked waiter looks again)


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

    def acquire_many(
        self, n: int, should_stop: Callable[[], bool] | None = None, timeout: float | None = None
    ) -> list[str]: ...

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> str | None: ...

    def try_acquire(self) -> str | None: ...

    def release(self, token: str) -> None: ...

    def release_many(self, tokens: list[str]) -> None: ...

    def release_if_wanted(self, tokens: list[str]) -> bool: ...


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + max(0.0, timeout)


# --- per process ----------------------------------------------------------------------------

_local: dict[str, tuple[threading.Condition, set[str]]] = {}
_local_wanted: dict[str, float] = {}  # key -> until when a failed take marks it wanted
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

    def acquire_many(
        self, n: int, should_stop: Callable[[], bool] | None = None, timeout: float | None = None
    ) -> list[str]:
        """Up to ``n`` free slots, waiting for at least one (the module's docstring)."""
        deadline = _deadline(timeout)
        with self._cond:
            while len(self._holders) >= self.limit:
                _local_wanted[self.key] = time.monotonic() + WANTED_MS / 1000
                if should_stop is not None and should_stop():
                    return []
                left = LOCAL_WAIT_S if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return []
                self._cond.wait(min(LOCAL_WAIT_S, left))
            take = max(1, min(int(n), self.limit - len(self._holders)))
            tokens = [uuid.uuid4().hex for _ in range(take)]
            self._holders.update(tokens)
        return tokens

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> str | None:
        """Block until a slot is free; the holder token, or None once ``should_stop()``."""
        return next(iter(self.acquire_many(1, should_stop)), None)

    def try_acquire(self) -> str | None:
        """A slot now, or None."""
        return next(iter(self.acquire_many(1, timeout=0)), None)

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

    def release_if_wanted(self, tokens: list[str]) -> bool:
        """Give the slots back only when a caller found the gate full lately (the module's
        docstring); True when given back."""
        with self._cond:
            if not tokens or _local_wanted.get(self.key, 0.0) < time.monotonic():
                return False
            _local_wanted.pop(self.key, None)
        self.release_many(tokens)
        return True

    def held(self) -> int:
        with self._cond:
            return len(self._holders)


# --- shared through Redis -------------------------------------------------------------------

# KEYS: holders (zset), wake list, wanted mark. ARGV: limit, lease in ms, tokens... Takes as
# many of the tokens as there are free slots; returns {taken, ms until the first holder's lease
# ends}. Taking none marks the gate wanted (release_if_wanted).
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
local take = math.min(free, #ARGV - 2)
if take <= 0 then
  redis.call('DEL', KEYS[2])
  redis.call('SET', KEYS[3], '1', 'PX', WANTED_MS)
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(first[2] or now) - now}
end
local lease = tonumber(ARGV[2])
for i = 1, take do
  redis.call('ZADD', KEYS[1], now + lease, ARGV[i + 2])
end
redis.call('PEXPIRE', KEYS[1], lease * 2)
if free - take <= 0 then
  redis.call('DEL', KEYS[2])
else
  redis.call('LTRIM', KEYS[2], take - free, -1)
end
return {take, 0}
""".replace("WANTED_MS", str(WANTED_MS))

# KEYS: holders, wake list[, wanted mark]. ARGV: limit, tokens... Frees each held token and
# leaves one wake-up per free slot (at most 64) for the waiters; with the wanted mark, only
# when it is set (and clears it), returning -1 when not.
_RELEASE_MANY = """
if KEYS[3] then
  if redis.call('DEL', KEYS[3]) == 0 then
    return -1
  end
end
local freed = 0
for i = 2, #ARGV do
  freed = freed + redis.call('ZREM', KEYS[1], ARGV[i])
end
if freed > 0 then
  for i = 1, math.min(freed, 64) do
    redis.call('RPUSH', KEYS[2], '1')
  end
  local free = math.min(64, tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1]))
  if free <= 0 then
    redis.call('DEL', KEYS[2])
  else
    redis.call('LTRIM', KEYS[2], -free, -1)
    redis.call('PEXPIRE', KEYS[2], 60000)
  end
end
return freed
"""

# KEYS: the holders of each key. ARGV: lease in ms, then for each key its count of tokens and
# the tokens. Pushes the leases of the tokens still held.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local i = 2
for k = 1, #KEYS do
  local n = tonumber(ARGV[i])
  for j = 1, n do
    redis.call('ZADD', KEYS[k], 'XX', now + lease, ARGV[i + j])
  end
  i = i + n + 1
  redis.call('PEXPIRE', KEYS[k], lease * 2)
end
return 0
"""

_scripts: dict[tuple[str, str], object] = {}
_scripts_lock = threading.Lock()


def _script(url: str, source: str):
    """The script on the client of ``url`` (run with ``EVALSHA``, loaded on first use)."""
    with _scripts_lock:
        script = _scripts.get((url, source))
        if script is None:
            script = _scripts[(url, source)] = redis_client(url).register_script(source)
        return script


def renew_every_s() -> float:
    return max(0.2, min(5.0, lease_s() / 4))


class _Renewer:
    """One side thread per process renewing every lease this process holds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], set[str]] = {}  # (url, zset key) -> tokens
        self._thread: threading.Thread | None = None
        self._pid = 0

    def add(self, url: str, key: str, tokens: list[str]) -> None:
        with self._lock:
            self._held.setdefault((url, key), set()).update(tokens)
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._pid = os.getpid()  # a forked child starts its own
                self._thread = threading.Thread(target=self._run, name="llm-gate", daemon=True)
                self._thread.start()

    def remove(self, url: str, key: str, tokens: list[str] | str) -> None:
        tokens = [tokens] if isinstance(tokens, str) else tokens
        with self._lock:
            held = self._held.get((url, key))
            if held is not None:
                held.difference_update(tokens)
                if not held:
                    del self._held[(url, key)]

    def _run(self) -> None:
        last = time.monotonic()
        while True:
            time.sleep(0.2)  # the beat follows the lease setting as it is now
            if time.monotonic() - last < renew_every_s():
                continue
            last = time.monotonic()
            lease_ms = int(lease_s() * 1000)
            by_url: dict[str, tuple[list[str], list]] = {}
            with self._lock:
                for (url, key), tokens in self._held.items():
                    keys, args = by_url.setdefault(url, ([], [lease_ms]))
                    keys.append(key)
                    args += [len(tokens), *tokens]
            for url, (keys, args) in by_url.items():  # one round trip per Redis
                try:
                    _script(url, _RENEW)(keys=keys, args=args)
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
        self._wanted = f"{self.PREFIX}{digest}:wanted"

    def _client(self):
        return redis_client(self.redis_url)

    def _take(self, n: int) -> tuple[list[str], float]:
        """One round trip: the tokens taken (up to ``n``), and when none, the seconds until
        the first holder's lease ends."""
        import redis

        tokens = [uuid.uuid4().hex for _ in range(max(1, min(int(n), self.limit)))]
        try:
            taken, wait_ms = _script(self.redis_url, _ACQUIRE)(
                keys=[self._holders, self._wake, self._wanted],
                args=[self.limit, int(lease_s() * 1000), *tokens],
            )
        except redis.RedisError as exc:
            raise _unreachable(exc) from exc
        tokens = tokens[: int(taken)]
        if tokens:
            _renewer.add(self.redis_url, self._holders, tokens)
        return tokens, max(0.0, int(wait_ms) / 1000)

    def acquire_many(
        self, n: int, should_stop: Callable[[], bool] | None = None, timeout: float | None = None
    ) -> list[str]:
        """Up to ``n`` free slots in one round trip, blocking on Redis until at least one is
        free; ``[]`` once ``should_stop()`` or after ``timeout`` s (the module's docstring)."""
        import redis

        deadline = _deadline(timeout)
        while True:
            tokens, until_expiry = self._take(n)
            if tokens:
                return tokens
            if should_stop is not None and should_stop():
                return []
            wait = min(WAIT_S, until_expiry + 0.005) if until_expiry else WAIT_S
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return []
            try:
                self._client().blpop([self._wake], timeout=max(0.01, round(wait, 3)))
            except redis.RedisError as exc:
                raise _unreachable(exc) from exc

    def acquire(self, should_stop: Callable[[], bool] | None = None) -> str | None:
        """Block until fewer than ``limit`` hold the key; the holder token, or None once
        ``should_stop()``."""
        return next(iter(self.acquire_many(1, should_stop)), None)

    def try_acquire(self) -> str | None:
        """A slot now, or None (one round trip)."""
        return next(iter(self.acquire_many(1, timeout=0)), None)

    def release(self, token: str) -> None:
        self.release_many([token])

    def release_many(self, tokens: list[str]) -> None:
        """Give back several slots in one round trip (a writer's stored batch)."""
        if not tokens:
            return
        _renewer.remove(self.redis_url, self._holders, tokens)
        try:
            _script(self.redis_url, _RELEASE_MANY)(
                keys=[self._holders, self._wake], args=[self.limit, *tokens]
            )
        except Exception:  # noqa: BLE001 - the leases lapse on their own
            logger.warning(
                "concurrency limit: %d slot(s) of %s lapse on their own", len(tokens), self.key
            )

    def release_if_wanted(self, tokens: list[str]) -> bool:
        """Give the slots back (in one round trip) only when a caller found the gate full
        since the last such give-back; True when given back, else they are still held."""
        if not tokens:
            return False
        try:
            freed = _script(self.redis_url, _RELEASE_MANY)(
                keys=[self._holders, self._wake, self._wanted], args=[self.limit, *tokens]
            )
        except Exception:  # noqa: BLE001 - kept: they go back with the feed's others
            return False
        if int(freed) < 0:
            return False
        _renewer.remove(self.redis_url, self._holders, tokens)
        return True

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
