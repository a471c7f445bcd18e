"""A process-wide micro-batcher per judge: judge requests from concurrent reward calls are
gathered for up to ``window_s`` (or until ``max_batch`` are waiting) and sent to the backend
together through its ``complete_iter`` (the backend's own thread pool keeps ``concurrency``
requests in flight). Gathered batches are dispatched on a few threads, so a new batch never
waits for a slow one. Callers get :class:`concurrent.futures.Future` objects: an async view
awaits them with ``asyncio.wrap_future`` and its event loop stays free meanwhile."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from benchmarks.llm.base import LLMBackend, LLMError, LLMRequest

WINDOW_S = 0.005
MAX_BATCH = 256
DISPATCHERS = 4


@dataclass
class BatcherStats:
    n_requests: int = 0
    n_batches: int = 0
    largest_batch: int = 0
    batch_sizes: list[int] = field(default_factory=list)


class JudgeBatcher:
    def __init__(
        self,
        backend: LLMBackend,
        *,
        window_s: float = WINDOW_S,
        max_batch: int = MAX_BATCH,
        dispatchers: int = DISPATCHERS,
    ) -> None:
        self.backend = backend
        self.window_s = window_s
        self.max_batch = max_batch
        self.stats = BatcherStats()
        self._queue: queue.Queue[tuple[LLMRequest, Future] | None] = queue.Queue()
        self._pool = ThreadPoolExecutor(max_workers=dispatchers, thread_name_prefix="reward")
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._gather, name="reward-batcher", daemon=True)
        self._thread.start()

    def submit(self, requests: list[LLMRequest]) -> list[Future]:
        """One future per request, resolved with an ``LLMResponse`` or an ``LLMError``."""
        futures = []
        for request in requests:
            future: Future = Future()
            self._queue.put((request, future))
            futures.append(future)
        return futures

    def _gather(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            try:
                while len(batch) < self.max_batch:
                    nxt = self._queue.get(timeout=self.window_s)
                    if nxt is None:
                        self._queue.put(None)
                        break
                    batch.append(nxt)
            except queue.Empty:
                pass
            with self._lock:
                self.stats.n_batches += 1
                self.stats.n_requests += len(batch)
                self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
                self.stats.batch_sizes.append(len(batch))
            self._pool.submit(self._send, batch)

    def _send(self, batch: list[tuple[LLMRequest, Future]]) -> None:
        done = [False] * len(batch)
        try:
            for index, result in self.backend.complete_iter([r for r, _ in batch]):
                batch[index][1].set_result(result)
                done[index] = True
        except Exception as exc:  # noqa: BLE001 - every waiting caller gets the reason
            error = LLMError(f"judge backend failed: {exc}")
            for (_, future), ok in zip(batch, done, strict=True):
                if not ok:
                    future.set_result(error)
            return
        for (_, future), ok in zip(batch, done, strict=True):
            if not ok:
                future.set_result(LLMError("the judge backend returned no result"))

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=True)
        self.backend.close()


_BATCHERS: dict[str, JudgeBatcher] = {}
_REGISTRY_LOCK = threading.Lock()


def batcher_for(key: str, config: dict[str, Any]) -> JudgeBatcher:
    """The batcher of one judge configuration (``key``: its judge_id), made on first use."""
    from benchmarks.llm.registry import build_backend

    with _REGISTRY_LOCK:
        batcher = _BATCHERS.get(key)
        if batcher is None:
            batcher = _BATCHERS[key] = JudgeBatcher(build_backend(config))
        return batcher


def close_all() -> None:
    """Stop every batcher (tests; process shutdown)."""
    with _REGISTRY_LOCK:
        batchers = list(_BATCHERS.values())
        _BATCHERS.clear()
    for batcher in batchers:
        batcher.close()
