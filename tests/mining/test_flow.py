"""The flow of a chunk through the stages (no database): each document moves to its next stage as
soon as its reply arrives, stages on one backend share its slots, backends without ``admit``
(vLLM batches, replay) still finish every document, a stop leaves documents where a resume
picks them up, and a raise in any feed reaches the caller."""

from __future__ import annotations

import threading
import time
from itertools import islice

import pytest

from benchmarks.llm.base import LLMBackend, LLMResponse
from benchmarks.llm.registry import build_backend
from mining.documents import KEPT, PENDING, DocState
from mining.pipeline import Pipeline
from mining.stages import LLM_STAGES
from tests.mining.script import MiningScript


def _docs(n: int) -> list[DocState]:
    return [
        DocState(key=i, text=f"Recipe {i}\nHow to bake bread number {i}. " + "Lorem. " * 5)
        for i in range(n)
    ]


class _Counted:
    """The scripted model behind the test server, holding each request ``hold_s`` while it
    counts how many are in flight (per model) and the order they arrive in."""

    def __init__(self, hold_s: float = 0.03) -> None:
        self.script, self.hold_s = MiningScript(), hold_s
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.order: list[str] = []

    def __call__(self, req):
        model = req.body.get("model", "")
        with self.lock:
            self.now[model] = self.now.get(model, 0) + 1
            self.peak[model] = max(self.peak.get(model, 0), self.now[model])
            self.order.append(self.script.stage_of(req))
        try:
            time.sleep(self.hold_s)
            return self.script(req)
        finally:
            with self.lock:
                self.now[model] -= 1


def _openai(llm_server, model: str, concurrency: int):
    return build_backend(
        {
            "backend": "openai",
            "base_url": llm_server.base_url,
            "model": model,
            "api_key_env": "",
            "concurrency": concurrency,
            "timeout_s": 10,
        }
    )


def test_documents_move_on_as_replies_arrive_and_stages_share_one_backends_slots(llm_server):
    counted = _Counted()
    llm_server.responder = counted
    backend = _openai(llm_server, "m", 4)
    docs = _docs(24)
    usage = Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=dict.fromkeys(LLM_STAGES, backend)).run(
        docs
    )
    assert [d.outcome for d in docs] == [KEPT] * 24
    assert all(len(d.trace) == 6 for d in docs)
    assert {k: u.requests for k, u in usage.items()} == dict.fromkeys(LLM_STAGES, 24)
    assert counted.peak == {"m": 4}  # one backend: its 4 slots, across the five stages
    order = counted.order
    assert len(order) == 5 * 24 and max(counted.script.requests.values()) == 1
    # no stage barrier: later stages are asked long before the last extraction goes out
    last_extraction = len(order) - 1 - order[::-1].index("procedures")
    assert order.index("final_filter") < last_extraction


def test_stages_on_different_backends_keep_their_own_slots(llm_server):
    counted = _Counted()
    llm_server.responder = counted
    extract, rest = _openai(llm_server, "extract", 2), _openai(llm_server, "rest", 3)
    backends = dict.fromkeys(LLM_STAGES, rest) | {"procedures": extract}
    docs = _docs(20)
    Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=backends).run(docs)
    assert [d.outcome for d in docs] == [KEPT] * 20
    assert counted.peak == {"extract": 2, "rest": 3}
    assert max(counted.script.requests.values()) == 1


class _Sliced(LLMBackend):
    """A backend without ``admit`` that takes requests in slices before answering any (as a
    vLLM batch does), answered by the script in this thread."""

    name = "sliced"

    def __init__(self, script: MiningScript, size: int = 5) -> None:
        super().__init__({"model": "sliced"})
        self.script, self.size, self.calls = script, size, 0

    def complete_iter(self, requests, *, should_stop=None):
        iterator, index = iter(requests), 0
        self.calls += 1
        while not (should_stop is not None and should_stop()):
            batch = list(islice(iterator, self.size))
            if not batch:
                return
            for request in batch:
                yield index, self._answer(request)
                index += 1

    def _answer(self, request) -> LLMResponse:
        class Req:
            body = {"response_format": {"json_schema": {"name": request.json_schema_name}}}
            prompt_text = request.messages[-1]["content"]

        reply = self.script(Req())
        text = reply["text"] if isinstance(reply, dict) else reply
        return LLMResponse(text=text, prompt_tokens=10, completion_tokens=5, model="sliced")


def test_a_backend_without_admit_is_called_again_for_what_arrived_meanwhile():
    script = MiningScript()
    backend = _Sliced(script)
    docs = _docs(12)
    Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=dict.fromkeys(LLM_STAGES, backend)).run(docs)
    assert [d.outcome for d in docs] == [KEPT] * 12
    assert sum(script.requests.values()) == 5 * 12 and max(script.requests.values()) == 1
    assert backend.calls > 1


def test_a_stop_leaves_documents_pending_where_the_next_run_picks_them_up():
    script = MiningScript()
    backend = _Sliced(script, size=3)
    backends = dict.fromkeys(LLM_STAGES, backend)
    docs = _docs(9)
    seen = []

    def on_update(doc, stage, usage):
        seen.append((doc.key, stage, usage.requests))

    Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=backends).run(
        docs, on_update=on_update, should_stop=lambda: len(seen) >= 7
    )
    assert 7 <= len(seen) < 5 * 9
    pending = [d for d in docs if d.outcome == PENDING]
    assert pending and any(d.last_passed_stage for d in pending)
    # every request made so far was handed to on_update with its usage
    assert sum(n for _k, _s, n in seen) == sum(script.requests.values())
    Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=backends).run(docs)
    assert [d.outcome for d in docs] == [KEPT] * 9
    assert sum(script.requests.values()) == 5 * 9 and max(script.requests.values()) == 1


def test_a_raise_in_a_feed_reaches_the_caller(llm_server):
    llm_server.responder = MiningScript()

    class Broken(_Sliced):
        def complete_iter(self, requests, *, should_stop=None):
            raise RuntimeError("engine died")
            yield  # pragma: no cover

    backends = dict.fromkeys(LLM_STAGES, _openai(llm_server, "m", 2))
    backends["filter"] = Broken(MiningScript())
    with pytest.raises(RuntimeError, match="engine died"):
        Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=backends).run(_docs(4))


def test_refill_keeps_slots_full_with_at_most_window_documents_open(llm_server):
    counted = _Counted()
    llm_server.responder = counted
    backend = _openai(llm_server, "m", 4)
    waiting = _docs(40)
    asked: list[tuple[int, int]] = []  # (open when asked, how many asked for)
    open_now = peak = 0

    def refill(n):
        nonlocal open_now, peak
        asked.append((open_now, n))
        more, waiting[:] = waiting[:n], waiting[n:]
        open_now += len(more)
        peak = max(peak, open_now)
        return more

    def on_update(doc, stage, usage):
        nonlocal open_now
        if doc.outcome != PENDING:
            open_now -= 1

    first = refill(10)
    usage = Pipeline(stages=[1, 2, 3, 4, 5, 6], backends=dict.fromkeys(LLM_STAGES, backend)).run(
        first, on_update=on_update, refill=refill, window=10
    )
    assert usage["procedures"].requests == 40 and not waiting and open_now == 0
    assert peak <= 10  # never more than the window open
    assert len(asked) > 4 and all(o <= 5 and o + n <= 10 for o, n in asked[1:])
    assert asked[-1][1] >= 1 and max(counted.script.requests.values()) == 1
    # no drain between blocks: extraction requests keep coming while later stages run
    order = counted.order
    assert (
        order.index("final_filter")
        < len(order) // 2
        < max(i for i, s in enumerate(order) if s == "procedures")
    )
