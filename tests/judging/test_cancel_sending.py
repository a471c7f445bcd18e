"""A cancelled judge run starts no request once its worker has seen the cancel: counted by the
local OpenAI-compatible server, at concurrency 16, on both of the backend's transports."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from benchmarks.llm.openai_compat import OpenAICompatBackend
from core.runs.reply_writer import ReplyWriter
from judging.models import JudgeRun, Judgment
from judging.services import runs as services
from tests.judging.factories import make_data, make_judge
from tests.judging.support import judge_responder, work_chunk
from tests.support.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("transport", ["aiohttp", "threads"])
def test_no_request_starts_after_the_worker_sees_the_cancel(llm_server, monkeypatch, transport):
    if transport == "threads":  # the thread-pool feed, as ``"transport": "threads"`` picks
        monkeypatch.setattr(OpenAICompatBackend, "uses_aiohttp", lambda self: False)
    llm_server.responder = judge_responder
    llm_server.latency_s = 0.005
    data = make_data(n=400)
    judge = make_judge(
        name="j16",
        base_url=llm_server.base_url,
        model="judge-model",
        concurrency=16,
        timeout_s=10,
    )
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    seen: dict[str, float] = {}
    should_stop = ReplyWriter.should_stop

    def noted(self) -> bool:
        stop = should_stop(self)
        if stop and "at" not in seen:
            seen["at"] = time.time()  # the first moment this worker knows
        return stop

    monkeypatch.setattr(ReplyWriter, "should_stop", noted)
    # when each request is handed to the HTTP client (both transports)
    started: list[float] = []
    send, send_async = OpenAICompatBackend.send, OpenAICompatBackend.send_async

    def timed(self, request):
        started.append(time.time())
        return send(self, request)

    async def timed_async(self, request):
        started.append(time.time())
        return await send_async(self, request)

    monkeypatch.setattr(OpenAICompatBackend, "send", timed)
    monkeypatch.setattr(OpenAICompatBackend, "send_async", timed_async)
    outcome = {}

    def work():
        try:
            outcome["value"] = work_chunk(run)
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    wait_for(lambda: Judgment.objects.count() >= 40, timeout=60, message="some judgments")
    assert services.judge_run_cancel(run=run).status == "cancelling"
    cancelled = time.time()  # committed
    worker.join(timeout=60)
    run.refresh_from_db()
    assert outcome["value"].status == "cancelled" and run.status == "cancelled"
    assert "at" in seen
    late_starts = [t for t in started if t > seen["at"]]
    assert late_starts == [], f"{len(late_starts)} requests started after the cancel was seen"
    # the server got exactly what was started: those arriving after the cancel was seen were
    # on their way before it
    assert len(llm_server.requests) == len(started)
    # the worker's feed looks at the run itself between requests (not only at the writer's beat,
    # up to a second later): what arrives after the cancel was committed is at most what was
    # in flight then and what went in the next look's interval
    late = sum(r.received_at > cancelled for r in llm_server.requests)
    assert late <= 2 * 16, f"{late} requests arrived after the cancel was committed"
    assert len(llm_server.requests) < 400
    assert run.n_done == Judgment.objects.count() == JudgeRun.objects.get(pk=run.pk).n_done
