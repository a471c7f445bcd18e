"""The endpoint's concurrency (benchmarks.llm.concurrency): the Redis lease-based semaphore and
the per-process one hold their limit across holders, hand a freed slot on, and a killed
holder's slots come back within the lease; backends of one endpoint + model + key name share
one limit, through real HTTP to the local server counting what it holds at once."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.conf import settings

from benchmarks.llm.base import LLMRequest
from benchmarks.llm.concurrency import LocalGate, SharedGate, build_gate
from benchmarks.llm.registry import build_backend
from tests.support.inflight import InFlight


def _key() -> str:
    return f"test-gate-{uuid.uuid4().hex}"


def _url() -> str:
    assert settings.RATE_LIMIT_REDIS_URL.startswith("redis://"), "these tests need Redis"
    return settings.RATE_LIMIT_REDIS_URL


def test_shared_gate_holds_its_limit_across_instances_and_hands_slots_on():
    key = _key()
    a = SharedGate(redis_url=_url(), key=key, limit=2)
    b = SharedGate(redis_url=_url(), key=key, limit=2)  # another process would build its own
    t1, t2 = a.try_acquire(), b.try_acquire()
    assert t1 and t2 and a.held() == 2
    assert a.try_acquire() is None and b.try_acquire() is None
    got: list[str | None] = []
    waiter = threading.Thread(target=lambda: got.append(b.acquire()))
    waiter.start()
    time.sleep(0.2)
    assert not got  # still waiting
    started = time.monotonic()
    a.release(t1)
    waiter.join(5)
    assert got and got[0] and time.monotonic() - started < 1.0
    assert a.held() == 2
    # a caller with a smaller limit never holds more than its own
    small = SharedGate(redis_url=_url(), key=key, limit=1)
    assert small.try_acquire() is None
    assert b.acquire(should_stop=lambda: True) is None  # gives up when told to stop
    for token in (t2, got[0]):
        a.release(token)
    assert a.held() == 0


def test_release_many_frees_a_batch_in_one_call_and_wakes_waiters():
    """A writer's stored batch gives its slots back at once (one Redis round trip): every
    token freed, one waiter woken per slot, unknown tokens ignored."""
    for gate in (
        SharedGate(redis_url=_url(), key=_key(), limit=3),
        LocalGate(key=_key(), limit=3),
    ):
        tokens = [gate.try_acquire() for _ in range(3)]
        assert all(tokens) and gate.held() == 3 and gate.try_acquire() is None
        got: list[str | None] = []
        waiters = [
            threading.Thread(target=lambda g=gate, out=got: out.append(g.acquire()))
            for _ in range(2)
        ]
        for w in waiters:
            w.start()
        time.sleep(0.2)
        assert not got  # both wait
        started = time.monotonic()
        gate.release_many([*tokens, "not-a-holder"])
        for w in waiters:
            w.join(5)
        assert len(got) == 2 and all(got) and time.monotonic() - started < 1.0
        assert gate.held() == 2
        gate.release_many(got)
        gate.release_many([])
        assert gate.held() == 0


def test_a_dead_holders_slots_come_back_within_the_lease(settings):
    settings.LLM_CONCURRENCY_LEASE_SECONDS = 1
    key = _key()
    gate = SharedGate(redis_url=_url(), key=key, limit=1)
    # a holder that dies: its slot is in Redis but nobody renews it (no renewer entry)
    import benchmarks.llm.concurrency as conc

    token = gate.try_acquire()
    conc._renewer.remove(gate.redis_url, gate._holders, [token])
    assert gate.try_acquire() is None
    started = time.monotonic()
    second = gate.acquire()
    assert second and 0.5 < time.monotonic() - started < 3.0
    # a live holder's slot is renewed past the lease
    time.sleep(2.0)
    assert gate.try_acquire() is None and gate.held() == 1
    gate.release(second)


@pytest.mark.parametrize("shared", [True, False])
def test_acquire_many_takes_what_is_free_in_one_call_and_blocks_for_at_least_one(shared):
    """``acquire_many(n)``: up to n of the free slots at once (never past the limit), a try
    with ``timeout=0``, [] after a timeout or once told to stop, and a blocked caller gets a
    slot as soon as one is released."""
    key = _key()
    gate = SharedGate(redis_url=_url(), key=key, limit=5) if shared else LocalGate(key=key, limit=5)
    first = gate.acquire_many(3)
    assert len(first) == 3 and len(set(first)) == 3 and gate.held() == 3
    second = gate.acquire_many(4)  # only two are free
    assert len(second) == 2 and gate.held() == 5
    assert gate.acquire_many(2, timeout=0) == [] and gate.try_acquire() is None
    started = time.monotonic()
    assert gate.acquire_many(1, timeout=0.3) == []
    assert 0.25 < time.monotonic() - started < 2.0
    assert gate.acquire_many(1, should_stop=lambda: True) == []
    got: list[list[str]] = []
    waiter = threading.Thread(target=lambda: got.append(gate.acquire_many(3)))
    waiter.start()
    time.sleep(0.3)
    assert not got  # blocked: nothing free
    started = time.monotonic()
    gate.release_many(first[:2])
    waiter.join(5)
    # woken by the release (the wake list), not by a later look: well under WAIT_S
    assert got and len(got[0]) == 2 and time.monotonic() - started < 0.5
    assert gate.held() == 5
    gate.release_many([*first[2:], *second, *got[0]])
    assert gate.held() == 0


def test_a_waiter_blocks_on_redis_instead_of_polling_and_stale_wake_ups_are_dropped():
    """While the key is full a waiter makes one round trip per WAIT_S at most (it blocks on
    the wake list); wake-ups left by releases nobody waited for never outnumber the free
    slots, so a later waiter is not woken for a slot that is already gone."""
    import redis

    import benchmarks.llm.concurrency as conc

    gate = SharedGate(redis_url=_url(), key=_key(), limit=2)
    client = redis.Redis.from_url(_url())
    held = gate.acquire_many(2)
    gate.release_many(held)  # two wake-ups, nobody waiting
    assert client.llen(gate._wake) == 2
    again = gate.acquire_many(2)  # the slots are gone: so are their wake-ups
    assert len(again) == 2 and client.llen(gate._wake) == 0
    calls = []
    real = gate._take

    def counted(n):
        calls.append(n)
        return real(n)

    gate._take = counted
    got: list[str | None] = []
    waiter = threading.Thread(target=lambda: got.append(gate.acquire()))
    waiter.start()
    time.sleep(2.5)
    assert not got and len(calls) <= 1 + 2.5 / conc.WAIT_S + 1, len(calls)
    gate.release(again[0])
    waiter.join(5)
    assert got and got[0]
    gate.release_many([again[1], got[0]])
    assert gate.held() == 0 and client.llen(gate._wake) <= 2


def test_local_gate_is_per_process_and_per_key():
    key = _key()
    a, b = LocalGate(key=key, limit=1), LocalGate(key=key, limit=1)
    token = a.try_acquire()
    assert token and b.try_acquire() is None
    assert LocalGate(key=_key(), limit=1).try_acquire()  # another endpoint
    a.release(token)
    assert b.try_acquire()
    assert isinstance(build_gate(key=key, limit=1, redis_url=""), LocalGate)
    assert isinstance(build_gate(key=key, limit=1, redis_url=_url()), SharedGate)


@pytest.mark.parametrize("redis_url", ["shared", ""])
def test_two_backends_of_one_endpoint_share_its_concurrency(llm_server, settings, redis_url):
    settings.RATE_LIMIT_REDIS_URL = _url() if redis_url else ""
    counter = InFlight(reply=lambda req: "ok", latency_s=0.1)
    llm_server.responder = counter
    config = {
        "backend": "openai",
        "base_url": llm_server.base_url,
        "model": f"m-{uuid.uuid4().hex[:6]}",
        "concurrency": 3,
        "max_retries": 0,
    }
    one, two = build_backend(config), build_backend(config)
    other = build_backend({**config, "model": "another-model"})  # its own limit
    results: list = []

    def drive(backend, n):
        results.extend(r for _, r in backend.complete_iter([LLMRequest(prompt="x")] * n))

    threads = [threading.Thread(target=drive, args=(b, 12)) for b in (one, two)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 24 and all(r.text == "ok" for r in results)
    assert counter.peak == 3  # each backend's pool is 3 wide: without the gate up to 6
    counter.reset()
    drive(other, 6)
    assert counter.peak == 3
