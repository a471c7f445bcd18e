"""How the OpenAI-compatible backend (:mod:`benchmarks.llm.openai_compat`) keeps its
``concurrency`` requests in flight for ``complete_iter``: on one asyncio event loop
(:func:`loop_feed`, the default when aiohttp is installed) or on a thread pool
(:func:`thread_feed`, ``"transport": "threads"``).

:func:`loop_feed`: each request is a coroutine of the official ``openai`` client's async API
(``AsyncOpenAI`` on its aiohttp transport, ``openai.DefaultAioHttpClient``: the
``openai[aiohttp]`` extra) on this process's request loop, one daemon thread started on first use
(a forked child starts its own). The thread iterating ``complete_iter`` — the feed — does the
rest, as the thread pool's feed does: it asks ``should_stop()`` and ``admit()`` and takes the
requests the caller admits (:func:`_gather`), then exactly as many slots of the endpoint's
concurrency gate (:mod:`benchmarks.llm.concurrency`) as that wave lacks, in one round trip, hands
the loop the wave in one call and yields the replies as they come. A finished request's slot
goes to the feed's next request (no Redis round trip per request while the feed keeps sending);
a slot it has no request for — the caller holds it back, or nothing more is to send — goes back
at once (one round trip for all), so another worker's lanes never wait on a slot that sits
unused here. Held back with nothing in flight it asks again after 1 ms, then longer, up to
:data:`GATE_POLL_S` (no spinning). A retry gives its slot back for the back-off and takes one
again, off the loop (the gate's wait blocks); the rate limit is paid on the loop
(``try_acquire``, then an asyncio sleep), so a request goes as soon as it is paid. Retries,
Retry-After, rate limits and slow start (``ramp_up_s``: the first wave spread, :class:`_Ramp`)
are the thread path's. An abandoned iteration waits for what is in flight, as a thread pool's
exit does.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from benchmarks.llm.base import LLMError, LLMRequest, LLMResult, NotSent

if TYPE_CHECKING:
    from benchmarks.llm.openai_compat import OpenAICompatBackend

logger = logging.getLogger(__name__)

GATE_POLL_S = 0.01  # a feed whose gate is full while its own requests are out asks this often
_WAKE = object()  # put on the replies' queue by the caller's ``admit.wake()``: look again now
# what a request the feed launched but did not send yet gets once the caller stops: not yielded
# (the caller's item stays as it was, to be sent by a later chunk), its slot goes back
NOT_SENT = NotSent()


class _Stop:
    """The caller's ``should_stop``, remembered once true: the feed asks it before a wave goes,
    and a request already handed to the loop (slow start, rate limit, a retry's back-off)
    looks at :attr:`seen` before each attempt, so none starts after the stop was seen."""

    def __init__(self, should_stop: Callable[[], bool] | None) -> None:
        self.should_stop, self.seen = should_stop, threading.Event()

    def __call__(self) -> bool:
        if not self.seen.is_set() and self.should_stop is not None and self.should_stop():
            self.seen.set()
        return self.seen.is_set()


class _Ramp:
    """Slow start (``ramp_up_s`` set): the first ``concurrency`` sends spread evenly over
    ``ramp_up_s`` on the loop's clock; later ones go as their slots free, once the first wave
    is out. Pacing those too (a token bucket at 0.8 x latency / concurrency) kept the
    sends from gathering into waves, but the replies, spread, were stored fewer a transaction:
    13-20% more CPU per judgment at 64 in flight for no more judgments/s (interleaved; see
    docs/performance/index.md#peers-judge). Used on the loop only."""

    def __init__(self, width: int, ramp_up_s: float) -> None:
        self.left, self.spacing, self.due = width, ramp_up_s / width, 0.0

    def at(self, now: float) -> float:
        """When the next request may go (loop time): past the first wave, at once, but not
        before the first wave's last (as the thread path, whose feed sleeps between them)."""
        if self.left <= 0:
            return max(now, self.due - self.spacing)
        self.left -= 1
        at = max(now, self.due)
        self.due = at + self.spacing
        return at


_loop: asyncio.AbstractEventLoop | None = None
_loop_pid = 0
_loop_lock = threading.Lock()


def aiohttp_installed() -> bool:
    """Whether the ``openai`` client's aiohttp transport can be used (aiohttp importable)."""
    return importlib.util.find_spec("aiohttp") is not None


def event_loop() -> asyncio.AbstractEventLoop:
    """This process's request loop, running on a daemon thread (started on first use)."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid() or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="llm-loop", daemon=True).start()
            _loop, _loop_pid = loop, os.getpid()
        return _loop


def close_client(client: Any) -> None:
    """Close an async client (its aiohttp session) on the loop it was used on."""
    loop = event_loop()
    try:
        asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=10)
    except Exception as exc:  # noqa: BLE001 - a connection that will not close is dropped
        logger.info("closing the async OpenAI client: %s", exc)


def take_slots(gate: Any, n: int, *, block: bool, stop: Callable[[], bool] | None) -> list[str]:
    """Up to ``n`` free slots of ``gate`` in one round trip (``Gate.acquire_many``), waiting
    for at least one only with ``block`` (else a try); ``[]`` once ``stop()``."""
    return gate.acquire_many(n, stop, None if block else 0)


async def _send(
    backend: OpenAICompatBackend,
    index: int,
    request: LLMRequest,
    token: str | None,
    finished: queue.SimpleQueue,
    stop: threading.Event,
) -> None:
    """One request with the backend's retries, on the loop; its ``(index, result, slot)``
    goes to ``finished`` whatever happens (:data:`NOT_SENT` when ``stop`` was set before an
    attempt could go)."""
    loop = asyncio.get_running_loop()
    result: LLMResult
    try:
        attempt = 0
        limited = backend.limiter.enabled
        tokens = backend.estimate_tokens(request) if limited else 0
        while True:
            # the rate limit on the loop (a lock, or one Redis round trip): sent as soon as paid
            while limited and (wait := backend.limiter.try_acquire(tokens=tokens)) > 0:
                await asyncio.sleep(wait)
            if stop.is_set():  # the caller stopped while this one waited: it is not sent
                result = NOT_SENT
                break
            try:
                result = await backend.send_async(request)
                break
            except LLMError as exc:
                result = exc
                break
            except Exception as exc:  # noqa: BLE001 - classified: retried or failed for good
                delay = backend.after_failure(exc, attempt)
                if isinstance(delay, LLMError):
                    result = delay
                    break
            # no slot held across the back-off (as the thread path): give it back, take one after
            held, token = token, None
            if held is not None:
                await loop.run_in_executor(None, backend.gate.release, held)
            await asyncio.sleep(delay)
            token = await loop.run_in_executor(None, backend.gate.acquire)
            attempt += 1
    except asyncio.CancelledError:
        finished.put((index, LLMError("request cancelled", retryable=True), token))
        raise
    except Exception as exc:  # noqa: BLE001 - complete_iter never raises per item
        error = exc if isinstance(exc, LLMError) else None
        result = error or LLMError(f"{type(exc).__name__}: {exc}", retryable=False)
    finished.put((index, result, token))


def loop_feed(
    backend: OpenAICompatBackend,
    requests: Iterable[LLMRequest],
    *,
    should_stop: Callable[[], bool] | None = None,
    admit: Callable[[], bool] | None = None,
) -> Iterator[tuple[int, LLMResult]]:
    """``complete_iter`` on the request loop (see the module's docstring)."""
    width = backend.limits.concurrency
    gate = backend.gate
    loop = event_loop()
    should_stop = _Stop(should_stop)
    try:
        _ = backend.aclient  # made (and the client imported) before the first wave
    except LLMError as exc:  # e.g. the key's variable unset: every request fails with it
        for index, _request in enumerate(requests):
            if should_stop is not None and should_stop():
                return
            yield index, exc
        return
    finished: queue.SimpleQueue = queue.SimpleQueue()
    tasks: set[asyncio.Task] = set()  # the loop holds tasks weakly
    if admit is not None and hasattr(admit, "wake"):
        # the caller wakes the feed when a request it held back may go (no poll's delay)
        admit.wake = lambda: finished.put(_WAKE)

    ramp = _Ramp(width, backend.ramp_up_s) if backend.ramp_up_s else None

    def start(index: int, request: LLMRequest, token: str | None) -> None:  # on the loop
        task = loop.create_task(_send(backend, index, request, token, finished, should_stop.seen))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def launch(wave: list[tuple[int, LLMRequest, str | None]]) -> None:  # on the loop
        for index, request, token in wave:
            if ramp is None or (at := ramp.at(loop.time())) <= loop.time():
                start(index, request, token)
            else:
                loop.call_at(at, start, index, request, token)

    iterator = iter(enumerate(requests))
    spare: list[str] = []  # slots of finished requests, for the next ones
    pending: list[tuple[int, LLMRequest]] = []  # requests in hand, waiting for a slot
    in_flight = looks = 0
    exhausted = False
    try:
        while True:
            # hand over every reply already here before sending more (a caller that sends only
            # once replies are stored gets them all)
            while in_flight:
                try:
                    item = finished.get_nowait()
                except queue.Empty:
                    break
                if item is _WAKE:
                    continue
                index, result, token = item
                in_flight -= 1
                if token is not None:
                    spare.append(token)
                if not isinstance(result, NotSent):
                    yield index, result
            # the wave's requests first (as many as the caller admits), then exactly as many
            # slots as they need: the feed never holds a slot it has no request for
            held = False
            if not exhausted:
                exhausted, held = _gather(iterator, pending, width - in_flight, should_stop, admit)
            if pending and len(spare) < len(pending):
                # in one round trip; blocking only with none out and none in hand (only
                # should_stop ends it): a feed that waited holding slots could wait for ever on
                # another doing the same, as when the requests admitted across feeds (the
                # bound on unstored ones) outnumber the endpoint's concurrency
                spare += take_slots(
                    gate,
                    len(pending) - len(spare),
                    block=not in_flight and not spare,
                    stop=should_stop,
                )
                if not spare and not in_flight:
                    pending.clear()  # stopped while waiting: nothing more is sent
                    exhausted = True
                held = held or len(spare) < len(pending)
            if pending and should_stop():  # seen while gathering or waiting: nothing goes
                pending.clear()
                exhausted = True
            wave: list[tuple[int, LLMRequest, str | None]] = []
            while pending and spare:
                index, request = pending.pop(0)
                wave.append((index, request, spare.pop()))
                in_flight += 1
            if wave:
                loop.call_soon_threadsafe(launch, wave)
                looks = 0
            if spare:  # held back or nothing more to send: the slots go back at once
                gate.release_many(spare)
                spare = []
            if not in_flight:
                if exhausted and not pending:
                    return
                looks = _pause(looks)  # held back with nothing in flight
                continue
            try:
                item = finished.get(timeout=GATE_POLL_S if held else None)
            except queue.Empty:
                continue
            if item is _WAKE:  # a held request may go now
                continue
            index, result, token = item
            in_flight -= 1
            if token is not None:
                spare.append(token)
            if not isinstance(result, NotSent):
                yield index, result
    finally:
        if admit is not None and hasattr(admit, "wake"):
            admit.wake = None
        while in_flight:  # abandoned: what was sent finishes, its slots go back
            item = finished.get()
            if item is _WAKE:
                continue
            _, _, token = item
            in_flight -= 1
            if token is not None:
                spare.append(token)
        if spare:
            gate.release_many(spare)


def _gather(
    iterator: Iterator[tuple[int, LLMRequest]],
    pending: list[tuple[int, LLMRequest]],
    room: int,
    should_stop: Callable[[], bool] | None,
    admit: Callable[[], bool] | None,
) -> tuple[bool, bool]:
    """Pull requests into ``pending`` while it has fewer than ``room``, asking ``should_stop``
    and ``admit`` before each: ``(exhausted, held)`` — nothing more will come (the iterator's
    end, or stopping: then ``pending`` is emptied), or the caller holds the next one back."""
    while len(pending) < room:
        if should_stop is not None and should_stop():
            pending.clear()
            return True, False
        if admit is not None and not admit():
            return False, True
        try:
            pending.append(next(iterator))
        except StopIteration:
            return True, False
    return False, False


def _pause(looks: int) -> int:
    """A feed held back with nothing in flight waits before asking again: 1 ms, then longer,
    up to :data:`GATE_POLL_S` (a caller's ``admit`` that waits itself, as the writer's
    backpressure does, is asked again at once)."""
    time.sleep(min(GATE_POLL_S, 0.001 * 2**looks) if looks else 0)
    return min(looks + 1, 8)


def thread_feed(
    backend: OpenAICompatBackend,
    requests: Iterable[LLMRequest],
    *,
    should_stop: Callable[[], bool] | None = None,
    admit: Callable[[], bool] | None = None,
) -> Iterator[tuple[int, LLMResult]]:
    """``complete_iter`` on a thread pool of ``concurrency`` threads, each request through the
    sync client (``backend.complete``, which takes and gives back its slot)."""
    width = backend.limits.concurrency
    should_stop = _Stop(should_stop)

    def send(request: LLMRequest) -> LLMResult:  # on a pool thread
        return backend.complete_or_error(request, stop=should_stop.seen.is_set)

    if backend.ramp_up_s:
        # the client (and its first import, ~0.5 s) before the first wave: made by the first
        # request's thread, it held the other three behind its lock and they left together
        _ = backend.client
    iterator = iter(enumerate(requests))
    finished: queue.SimpleQueue = queue.SimpleQueue()
    pending: list[tuple[int, LLMRequest]] = []
    in_flight = started = looks = 0
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="llm") as pool:
        exhausted = False
        while True:
            # hand over every reply already here before asking for the next request: a
            # caller that sends only once replies are stored (backpressure) gets them all
            while in_flight:
                try:
                    index, future = finished.get_nowait()
                except queue.Empty:
                    break
                in_flight -= 1
                if not isinstance(result := future.result(), NotSent):
                    yield index, result
            held = False
            if not exhausted:
                exhausted, held = _gather(iterator, pending, width - in_flight, should_stop, admit)
            for index, request in pending:
                if started < width and backend.ramp_up_s and started:
                    time.sleep(backend.ramp_up_s / width)  # slow start: spread the first wave
                if should_stop():
                    exhausted = True
                    break
                future = pool.submit(send, request)
                future.add_done_callback(lambda f, i=index: finished.put((i, f)))
                in_flight += 1
                started += 1
                looks = 0
            pending.clear()
            if not in_flight:
                if exhausted:
                    return
                looks = _pause(looks)  # held back with nothing in flight
                continue
            try:
                index, future = finished.get(timeout=GATE_POLL_S if held else None)
            except queue.Empty:
                continue
            in_flight -= 1
            if not isinstance(result := future.result(), NotSent):
                yield index, result
