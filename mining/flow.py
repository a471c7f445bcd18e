"""Driving a chunk of documents through the pipeline's LLM stages. Pure Python, no Django.

No stage waits for the chunk's slowest reply: a document moves to its next stage as soon as
its reply arrives, so the backend's request slots stay full from the chunk's first request to
its last few. Stages that share a backend (the same config: one instance,
:func:`mining.services.stage_backends.stage_backends`) share its concurrency: one feed per
backend, later stages first (a document in flight finishes before a new one starts, so what is
stored mid-way stays small). A backend whose ``complete_iter`` takes ``admit`` (the OpenAI
client) is held open while its feed is empty and replies are due; one that does not (a vLLM
batch, the replay backend) is called again for what arrived meanwhile.

Hooks, all optional, let the executor store as it goes (:mod:`core.runs.reply_writer`):

- ``on_update(doc, stage, usage)`` after each reply has been applied (``stage`` and ``usage``
  are the request's), and for a document finished without any request (``stage`` None);
- ``take()`` before each request is sent (may wait for a slot; False stops sending);
- ``admit()`` whether a request could be sent now without waiting (polled by the backend);
- ``should_stop()`` once true nothing new is sent; replies in flight are still applied, and
  documents not finished stay pending (``last_passed_stage`` says where they resume);
- ``refill(n)`` more documents (at most ``n``, none once there are no more), asked on the
  calling thread whenever no more than ``window // 2`` are open, so a chunk keeps its slots
  full to its end instead of draining after each block of documents; at most ``window``
  documents are open at once.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks.llm.base import LLMRequest, takes_admit
from mining.documents import DocState, StageUsage
from mining.stages import STAGE_NUMBERS

if TYPE_CHECKING:  # a type only: the pipeline runs its chunks through this module
    from mining.pipeline import Pipeline

WAIT_S = 0.05  # how often a feed with nothing to send looks at should_stop


@dataclass(order=True)
class _Job:
    rank: tuple[int, int]  # (-stage number, arrival): later stages first, then first come
    stage: str = field(compare=False)
    doc: DocState = field(compare=False)


@dataclass
class _Feed:
    backend: Any
    jobs: list[_Job] = field(default_factory=list)  # a heap


class Flow:
    def __init__(
        self,
        pipeline: Pipeline,
        *,
        on_update: Callable[[DocState, str | None, StageUsage | None], None] | None = None,
        take: Callable[[], bool] | None = None,
        admit: Callable[[], bool] | None = None,
        should_stop: Callable[[], bool] | None = None,
        refill: Callable[[int], list[DocState]] | None = None,
        window: int = 0,
    ) -> None:
        self.pipeline = pipeline
        self.refill, self.window = refill, window
        self.exhausted = refill is None  # no more documents will come
        self.owner = threading.current_thread()  # refills run here (the caller's connection)
        self.on_update, self.take, self.admit, self.should_stop = (
            on_update,
            take,
            admit,
            should_stop,
        )
        self.usage: dict[str, StageUsage] = {}
        self.feeds: dict[int, _Feed] = {}
        for key, backend in pipeline.backends.items():
            if backend is not None and STAGE_NUMBERS.get(key) in pipeline.stages:
                self.feeds.setdefault(id(backend), _Feed(backend))
        self.cond = threading.Condition()
        self.open = 0  # documents waiting for a request or its reply
        self.stopped = False
        self.error: BaseException | None = None
        self._arrival = itertools.count()

    # -- state ---------------------------------------------------------------------------
    def _stopping(self) -> bool:
        if not self.stopped and (
            self.error is not None or (self.should_stop is not None and self.should_stop())
        ):
            self.stopped = True
        return self.stopped

    def _over(self) -> bool:
        return (self.open == 0 and self.exhausted) or self._stopping()

    def _refill_due(self) -> bool:
        return (
            not self.exhausted
            and self.open <= self.window // 2
            and threading.current_thread() is self.owner
            and not self._stopping()
        )

    def _refill(self) -> None:
        if not self._refill_due():
            return
        docs = self.refill(max(1, self.window - self.open))
        if not docs:
            with self.cond:
                self.exhausted = True
                self.cond.notify_all()
        for doc in docs:
            self._route(doc, None, None)

    def _route(self, doc: DocState, stage: str | None, usage: StageUsage | None) -> None:
        """After a reply (or at the start): the document's next LLM stage goes to its feed, or
        it is finished. The hook sees the document before it can be sent again."""
        nxt = self.pipeline.advance(doc)
        if self.on_update is not None and (stage is not None or nxt is None):
            self.on_update(doc, stage, usage)
        with self.cond:
            if usage is not None:
                self.usage.setdefault(stage, StageUsage()).add(usage)
            if nxt is None:
                self.open -= stage is not None
            else:
                self.open += stage is None
                feed = self.feeds[id(self.pipeline.backends[nxt])]
                job = _Job((-STAGE_NUMBERS[nxt], next(self._arrival)), nxt, doc)
                heapq.heappush(feed.jobs, job)
            self.cond.notify_all()

    # -- one backend ---------------------------------------------------------------------
    def _requests(self, feed: _Feed, sent: list[_Job]) -> Iterator[LLMRequest]:
        while True:
            self._refill()
            with self.cond:
                if self._over() or not feed.jobs:
                    return
                job = heapq.heappop(feed.jobs)
            if self.take is not None and not self.take():
                with self.cond:
                    heapq.heappush(feed.jobs, job)  # not sent: it stays pending
                    self.stopped = True
                return
            sent.append(job)
            yield self.pipeline.request(job.stage, job.doc)

    def _drive(self, feed: _Feed) -> None:
        backend = feed.backend
        hold: dict[str, Any] = {}
        if takes_admit(backend):
            # held open while replies are due; asked for a request once one is queued
            hold["admit"] = lambda: (
                self._over() or (bool(feed.jobs) and (self.admit is None or self.admit()))
            )
        while True:
            with self.cond:
                while not feed.jobs and not self._over():
                    self.cond.wait(WAIT_S)
                if self._over():
                    return
            sent: list[_Job] = []
            for index, result in backend.complete_iter(
                self._requests(feed, sent), should_stop=self._stopping, **hold
            ):
                job = sent[index]
                usage = self.pipeline.reply(job.stage, job.doc, result)
                self._route(job.doc, job.stage, usage)
                self._refill()

    def _guarded(self, feed: _Feed) -> None:
        try:
            self._drive(feed)
        except BaseException as exc:  # noqa: BLE001 - re-raised by run()
            with self.cond:
                self.error = self.error or exc
                self.cond.notify_all()

    # -- a chunk -------------------------------------------------------------------------
    def run(self, docs: list[DocState]) -> dict[str, StageUsage]:
        for doc in docs:
            self._route(doc, None, None)
        feeds = list(self.feeds.values())
        if not feeds:  # nothing to ask: every document is finished by the stages without a model
            while not self.exhausted and not self._stopping():
                self._refill()
        elif self.open or not self.exhausted:
            threads = [
                threading.Thread(target=self._guarded, args=(f,), name="mining-feed", daemon=True)
                for f in feeds[1:]
            ]
            for thread in threads:
                thread.start()
            self._guarded(feeds[0])
            for thread in threads:
                thread.join()
        if self.error is not None:
            raise self.error
        return self.usage
