"""A feed holds only the endpoint slots it sends with (two workers sharing a run):
the request loop takes a wave's slots for the requests it has in hand and gives back what it
has no request for while its caller holds it back; the writer's backpressure takes no more
than the chunk still sends, gives a stored reply's slot to another process that found the
gate full, and waits (on the writer or the gate's wake list) instead of being asked again and
again when nothing is in flight. Real Redis gate, real HTTP to the local test server."""

from __future__ import annotations

import threading
import time
import uuid

from django.conf import settings

from benchmarks.llm.base import LLMRequest, LLMResponse
from benchmarks.llm.concurrency import LocalGate, SharedGate
from benchmarks.llm.registry import build_backend
from core.runs import reply_writer
from core.runs.reply_writer import Backpressure
from tests.support.inflight import InFlight

never = lambda: False  # noqa: E731


def _gate(limit: int) -> SharedGate:
    assert settings.RATE_LIMIT_REDIS_URL.startswith("redis://"), "these tests need Redis"
    return SharedGate(redis_url=settings.RATE_LIMIT_REDIS_URL, key=uuid.uuid4().hex, limit=limit)


def _other(gate: SharedGate) -> SharedGate:
    """The same key as another process builds it."""
    return SharedGate(redis_url=gate.redis_url, key=gate.key, limit=gate.limit)


def test_release_if_wanted_gives_back_only_after_a_failed_take():
    gate = _gate(2)
    mine = gate.acquire_many(2)
    assert len(mine) == 2
    assert gate.release_if_wanted(mine[:1]) is False and gate.held() == 2  # nobody waits: kept
    other = _other(gate)
    assert other.try_acquire() is None  # found it full: marks it wanted
    assert gate.release_if_wanted(mine[:1]) is True and gate.held() == 1
    assert other.try_acquire() is not None
    assert gate.release_if_wanted(mine[1:]) is False  # the mark was used up
    assert gate.held() == 2


def test_local_gate_release_if_wanted():
    gate = LocalGate(key=uuid.uuid4().hex, limit=1)
    token = gate.try_acquire()
    assert gate.release_if_wanted([token]) is False and gate.held() == 1
    assert gate.try_acquire() is None
    assert gate.release_if_wanted([token]) is True and gate.held() == 0


def test_backpressure_takes_no_more_than_the_chunk_still_sends():
    gate = _gate(64)
    slots = Backpressure(64, gate, total=5)
    assert slots.free() and gate.held() == 5  # not the 64 the width allows
    for _ in range(5):
        assert slots.take(never)
    assert gate.held() == 5  # every slot has a request: none spare
    slots.returned()
    slots.stored(1)  # nothing more to send: it goes back at once
    assert gate.held() == 4
    slots.close()
    assert gate.held() == 0


def test_backpressure_gives_a_stored_slot_to_a_process_that_waits(monkeypatch):
    monkeypatch.setattr(reply_writer, "GATE_POLL_S", 0.0)
    gate = _gate(2)
    slots = Backpressure(2, gate)
    assert slots.take(never) and slots.take(never)
    slots.returned()
    slots.stored(1)  # nobody waits: kept for this feed's next request
    assert gate.held() == 2 and slots._spare
    other = _other(gate)
    assert other.try_acquire() is None
    slots.returned()
    slots.stored(1)  # the other process found the gate full: this one goes back
    assert gate.held() == 1 and len(slots._spare) == 1
    assert other.try_acquire() is not None
    slots.close()


def test_a_held_feed_with_nothing_in_flight_waits_on_the_gate_not_a_spin():
    gate = _gate(1)
    other = _other(gate)
    token = other.try_acquire()
    slots = Backpressure(1, gate)
    calls = []
    real = gate.acquire_many
    gate.acquire_many = lambda *a: calls.append(a) or real(*a)
    started = time.monotonic()
    assert slots.free() is False  # nothing frees it: waited once, one round trip-ish
    waited = time.monotonic() - started
    assert reply_writer.HOLD_WAIT_S * 0.8 <= waited < 1.0 and len(calls) == 1
    threading.Timer(0.02, lambda: other.release(token)).start()
    started = time.monotonic()
    assert slots.free() is True  # woken by the release, not at the end of the wait
    assert time.monotonic() - started < reply_writer.HOLD_WAIT_S
    slots.close()
    assert gate.held() == 0


def test_the_loop_holds_no_slot_its_caller_holds_back(llm_server, llm_backend_config):
    llm_server.responder = InFlight(reply=lambda req: "ok", latency_s=0.02)
    config = {**llm_backend_config, "model": f"m-{uuid.uuid4().hex[:8]}"}
    backend = build_backend({**config, "concurrency": 16, "transport": "aiohttp"})
    assert isinstance(backend.gate, SharedGate)
    out = {"sent": 0, "handed": 0}
    most = []

    def admit() -> bool:  # a caller that lets 3 be out at once
        return out["sent"] - out["handed"] < 3

    def requests():
        for i in range(30):
            out["sent"] += 1
            yield LLMRequest(prompt=str(i))

    try:
        got = 0
        for _index, result in backend.complete_iter(requests(), admit=admit):
            assert isinstance(result, LLMResponse)
            out["handed"] += 1
            most.append(backend.gate.held())
            got += 1
        assert got == 30
        assert max(most) <= 3, most  # 16 before: a wave took the cap and kept the rest
        assert backend.gate.held() == 0
    finally:
        backend.close()


def test_the_endpoint_wide_unstored_bound_follows_the_setting(llm_backend_config, monkeypatch):
    """``H2R_JUDGE_UNSTORED_MAX`` raises what may be sent and not yet stored for the endpoint
    too, not only a run's own backpressure (whose width the gate would otherwise cap), while
    requests in flight stay at the backend's concurrency."""
    config = {**llm_backend_config, "model": f"m-{uuid.uuid4().hex[:8]}", "concurrency": 16}

    def widths() -> tuple[int, int, int]:
        """(the endpoint's unstored gate, its in-flight gate, a run's own width)."""
        backend = build_backend(config)
        try:
            width = reply_writer.unstored_width(backend.limits.concurrency)
            return backend.unstored_gate().limit, backend.gate.limit, width
        finally:
            backend.close()

    monkeypatch.delenv("H2R_JUDGE_UNSTORED_MAX", raising=False)
    assert widths() == (24, 16, 24)  # the requests in flight (16) and half as many to commit
    monkeypatch.setenv("H2R_JUDGE_UNSTORED_MAX", "40")
    assert widths() == (40, 16, 40)


def test_a_feed_never_waits_for_a_slot_while_it_holds_one(llm_server, llm_backend_config):
    """Two holders of one endpoint (concurrency 2), each wanting a second slot while it holds
    one: another process takes one slot, the feed gets the other and has more requests in hand
    than that. The feed sends with the slot it holds rather than waiting for a second while
    holding the first (the other holder waits for the feed's slot: both would wait for ever;
    here the other gives up after 10 s, which lets a stuck feed go on, and the test fails).
    The other holder gets its second slot once the feed is done."""
    counter = InFlight(reply=lambda req: "ok", latency_s=0.01)
    llm_server.responder = counter
    config = {
        **llm_backend_config,
        "model": f"m-{uuid.uuid4().hex[:8]}",
        "concurrency": 2,
        "transport": "aiohttp",
    }
    backend = build_backend(config)
    assert isinstance(backend.gate, SharedGate)
    other = _other(backend.gate)
    first = other.try_acquire()
    assert first is not None
    second: list[str] = []

    def other_holder() -> None:  # holds one slot and waits up to 10 s for another
        until = time.monotonic() + 10
        while counter.total < 1 and time.monotonic() < until:
            time.sleep(0.001)
        try:
            second.extend(other.acquire_many(1, lambda: time.monotonic() > until))
        finally:
            other.release_many([first, *second])

    holder = threading.Thread(target=other_holder, daemon=True)
    holder.start()
    try:
        feed = backend.complete_iter(LLMRequest(prompt=str(i)) for i in range(30))
        results = [result for _index, result in feed]
        holder.join(timeout=30)
        assert second, "the feed waited for a second slot while holding one"
        assert len(results) == 30 and all(isinstance(r, LLMResponse) for r in results)
        assert counter.peak <= 1, counter.peak  # the feed had one slot of the two
        assert backend.gate.held() == 0
    finally:
        backend.close()
