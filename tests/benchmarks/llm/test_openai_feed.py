"""How the OpenAI-compatible backend keeps its requests in flight (benchmarks.llm.openai_feed):
on one event loop through the ``openai`` client's aiohttp transport (the default) and on a
thread pool (``"transport": "threads"``), through real HTTP to the local test server: the same
replies, retries and Retry-After on the loop, a finished request's slot of the endpoint's gate
(Redis) kept for the next request and every slot given back at the end, also when the caller
stops iterating; and the writer's backpressure keeping its stored replies' slots for the next
requests until the feed has nothing more to send."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.conf import settings

from benchmarks.llm import openai_feed
from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from benchmarks.llm.concurrency import SharedGate
from benchmarks.llm.registry import build_backend
from core.runs.reply_writer import Backpressure
from tests.support.inflight import InFlight


class CountingGate:
    """The backend's real gate, counting the round trips that took slots from it."""

    def __init__(self, gate) -> None:
        self.gate, self.taken = gate, 0
        self.key, self.limit = gate.key, gate.limit

    def acquire_many(self, n, should_stop=None, timeout=None):
        tokens = self.gate.acquire_many(n, should_stop, timeout)
        self.taken += bool(tokens)
        return tokens

    def acquire(self, should_stop=None):
        token = self.gate.acquire(should_stop)
        self.taken += token is not None
        return token

    def try_acquire(self):
        token = self.gate.try_acquire()
        self.taken += token is not None
        return token

    def release(self, token):
        self.gate.release(token)

    def release_many(self, tokens):
        self.gate.release_many(tokens)

    def held(self):
        return self.gate.held()


def _shared() -> None:
    assert settings.RATE_LIMIT_REDIS_URL.startswith("redis://"), "these tests need Redis"


def _config(llm_backend_config, **extra):
    # a model of its own: the endpoint's gate is keyed by it
    return {**llm_backend_config, "model": f"m-{uuid.uuid4().hex[:8]}", **extra}


@pytest.mark.parametrize("transport", ["aiohttp", "threads"])
def test_both_feeds_keep_the_concurrency_and_report_failures_inline(
    llm_server, llm_backend_config, transport
):
    counter = InFlight(reply=lambda req: f"re: {req.last_message}", latency_s=0.1)
    llm_server.responder = counter
    llm_server.add_fault("status", status=400, match=lambda r: r.last_message == "p5")
    backend = build_backend(_config(llm_backend_config, concurrency=4, transport=transport))
    assert backend.uses_aiohttp() is (transport == "aiohttp")
    try:
        results = backend.complete_many(
            [LLMRequest(messages=[{"role": "user", "content": f"p{i}"}]) for i in range(20)]
        )
    finally:
        backend.close()
    texts = [r.text if isinstance(r, LLMResponse) else "ERR" for r in results]
    assert texts == [f"re: p{i}" if i != 5 else "ERR" for i in range(20)]
    assert isinstance(results[5], LLMError) and results[5].status == 400
    assert not results[5].retryable
    assert counter.peak == 4
    assert len(llm_server.requests) == 20  # the 400 asked once


def test_the_loop_retries_with_retry_after_and_backoff(llm_server, llm_backend_config):
    llm_server.add_fault(
        "status", status=429, retry_after=0.5, match=lambda r: r.prompt_text == "a"
    )
    llm_server.add_fault("status", status=503, count=2, match=lambda r: r.prompt_text == "b")
    llm_server.add_fault("malformed", match=lambda r: r.prompt_text == "c")
    llm_server.add_fault("hang", seconds=2, match=lambda r: r.prompt_text == "d")
    llm_server.add_fault("status", status=500, count=10, match=lambda r: r.prompt_text == "e")
    backend = build_backend(_config(llm_backend_config, timeout_s=0.5, transport="aiohttp"))
    started = time.monotonic()
    try:
        results = backend.complete_many([LLMRequest(prompt=p) for p in "abcde"])
    finally:
        backend.close()
    assert [r.text for r in results[:4]] == ["echo: a", "echo: b", "echo: c", "echo: d"]
    assert isinstance(results[4], LLMError) and results[4].status == 500
    assert results[4].retryable and "after 4 attempt(s)" in str(results[4])
    faults = {p: [r.fault for r in llm_server.requests if r.prompt_text == p] for p in "abcde"}
    assert faults == {
        "a": ["status", None],
        "b": ["status", "status", None],
        "c": ["malformed", None],
        "d": ["hang", None],
        "e": ["status"] * 4,  # 1 + max_retries=3
    }
    a_times = [r.received_at for r in llm_server.requests if r.prompt_text == "a"]
    assert a_times[1] - a_times[0] >= 0.45  # backoff_base is 0.01: only Retry-After explains it
    assert time.monotonic() - started < 5


def test_the_loop_keeps_a_finished_requests_slot_and_gives_all_back(llm_server, llm_backend_config):
    _shared()
    llm_server.latency_s = 0.02
    backend = build_backend(_config(llm_backend_config, concurrency=4, transport="aiohttp"))
    gate = backend.gate = CountingGate(backend.gate)
    assert isinstance(gate.gate, SharedGate)
    try:
        results = backend.complete_many([LLMRequest(prompt=str(i)) for i in range(60)])
    finally:
        backend.close()
    assert all(isinstance(r, LLMResponse) for r in results)
    assert gate.taken <= 4, gate.taken  # the first wave's (not 60: one per request)
    assert gate.held() == 0


def test_a_caller_that_stops_iterating_gets_every_slot_back(llm_server, llm_backend_config):
    _shared()
    counter = InFlight(reply=lambda req: "ok", latency_s=0.2)
    llm_server.responder = counter
    backend = build_backend(_config(llm_backend_config, concurrency=4, transport="aiohttp"))
    try:
        replies = backend.complete_iter([LLMRequest(prompt=str(i)) for i in range(40)])
        first = next(replies)
        replies.close()  # what was sent finishes; nothing new goes
        assert isinstance(first[1], LLMResponse)
        assert backend.gate.held() == 0
        assert counter.now == 0 and counter.total <= 8
    finally:
        backend.close()


def test_should_stop_sends_nothing_new_and_what_is_in_flight_finishes(
    llm_server, llm_backend_config
):
    llm_server.latency_s = 0.1
    backend = build_backend(_config(llm_backend_config, concurrency=4, transport="aiohttp"))
    stop = threading.Event()
    got = []
    try:
        for index, result in backend.complete_iter(
            [LLMRequest(prompt=str(i)) for i in range(100)], should_stop=stop.is_set
        ):
            got.append((index, result))
            stop.set()
    finally:
        backend.close()
    assert 1 <= len(got) <= 8 and all(isinstance(r, LLMResponse) for _, r in got)
    assert len(llm_server.requests) == len(got)  # every request sent was handed over


def test_the_loop_is_one_thread_per_process():
    loop = openai_feed.event_loop()
    assert openai_feed.event_loop() is loop and loop.is_running()
    names = [t.name for t in threading.enumerate()]
    assert names.count("llm-loop") == 1


def test_backpressure_keeps_stored_slots_until_the_feed_is_done_sending():
    _shared()
    gate = CountingGate(
        SharedGate(redis_url=settings.RATE_LIMIT_REDIS_URL, key=uuid.uuid4().hex, limit=2)
    )
    slots = Backpressure(2, gate)
    never = lambda: False  # noqa: E731
    assert slots.take(never) and slots.take(never)
    assert gate.taken == 2 and gate.held() == 2
    slots.returned()
    slots.stored(1)  # kept for the next request: still held, no new round trip
    assert gate.held() == 2 and slots.free()
    assert slots.take(never) and gate.taken == 2
    slots.returned()
    slots.returned()
    slots.stored(1)
    slots.done_sending()  # the kept slot goes back, and the next stored one as it is stored
    assert gate.held() == 1
    slots.stored(1)
    assert gate.held() == 0
    slots.close()
    assert gate.held() == 0


def test_backpressure_close_gives_back_what_was_not_stored():
    _shared()
    gate = SharedGate(redis_url=settings.RATE_LIMIT_REDIS_URL, key=uuid.uuid4().hex, limit=3)
    slots = Backpressure(3, gate)
    assert slots.take(lambda: False) and slots.take(lambda: False)
    slots.returned()
    slots.stored(1)
    assert gate.held() == 2  # one sent and not stored, one kept
    slots.close()
    assert gate.held() == 0


def _held_feed(backend, server, admit_of, tag: str) -> float:
    """Five requests through the request loop behind a writer's backpressure of 2 whose replies
    are stored 50 ms after they are handed over (another thread, as the reply writer); request
    0 is answered after 1.5 s, the others at once. Seconds from request 0 to request 4 at the
    server: the feed is held with request 0 in flight until a stored reply frees a slot."""
    server.add_fault("slow", seconds=1.5, match=lambda r: r.prompt_text == f"{tag}-0")
    slots = Backpressure(2)

    def tracked():
        for i in range(5):
            if not slots.take(lambda: False):
                return
            yield LLMRequest(prompt=f"{tag}-{i}")

    def store_later() -> None:
        time.sleep(0.05)
        slots.stored(1)

    got = 0
    for _index, result in backend.complete_iter(tracked(), admit=admit_of(slots)):
        assert isinstance(result, LLMResponse)
        slots.returned()
        threading.Thread(target=store_later).start()
        got += 1
    assert got == 5
    at = {r.prompt_text: r.received_at for r in server.requests}
    return at[f"{tag}-4"] - at[f"{tag}-0"]


def test_a_slot_freed_by_the_writer_wakes_the_feed_instead_of_its_next_poll(
    llm_server, llm_backend_config, monkeypatch
):
    """The writer's stored reply wakes a feed held back by the backpressure while a request is
    still out (``admit.wake``, set by the request loop): the next request goes at once. With a
    poll of 1 s, a feed that is only polled (a plain ``admit`` callable) waits for the poll."""
    monkeypatch.setattr(openai_feed, "GATE_POLL_S", 1.0)
    backend = build_backend(_config(llm_backend_config, concurrency=4, transport="aiohttp"))
    try:
        woken = _held_feed(backend, llm_server, lambda slots: slots, "w")  # has ``wake``
        polled = _held_feed(backend, llm_server, lambda slots: slots.free, "p")  # polled only
    finally:
        backend.close()
    assert woken < 0.5 and polled > 0.9, (woken, polled)
