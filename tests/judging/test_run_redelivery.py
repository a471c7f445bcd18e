"""Exactly-once work per chunk with two real Celery worker processes on one Redis queue.

The broker's visibility timeout is made shorter than the chunk (2 s against ~6 s), and the
workers look for unacknowledged messages every second, so Redis really hands the chunk's message
to the second worker while the first still works it (the same task id received twice). The copy
finds the run's lease held by a live execution and calls no model: the local test server counts
exactly one request per item, and every item has exactly one judgment.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.db import transaction

from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import runs as services
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import judge_responder
from tests.support.llm_fixtures import llm_server  # noqa: F401
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 120
ENV = {
    "CELERY_VISIBILITY_TIMEOUT": "2",
    "CELERY_UNACKED_RESTORE_INTERVAL": "1",
    "RUN_LEASE_SECONDS": "20",  # the first copy's lease stays fresh for the whole chunk
    "H2R_JUDGE_CHUNK_ITEMS": "1000",  # one chunk for the whole run
}
RECEIVED = re.compile(r"Task core\.run_chunk\[([0-9a-f-]+)\] received")


def test_a_chunk_redelivered_while_it_runs_buys_nothing_twice(llm_server, tmp_path):  # noqa: F811
    llm_server.responder = judge_responder
    llm_server.latency_s = 0.2  # 120 items at concurrency 4: a chunk of about 6 s
    data = make_data(n=N, bad_every=7)
    judge = make_judge(
        name="redelivery-judge", base_url=llm_server.base_url, preset=FAIL_FAST, max_retries=2
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()  # one log each (the log is named after the queue)
    first = start_worker(tmp_path / "a", concurrency=1, extra_env=ENV)
    try:
        with running_worker(
            tmp_path / "b", concurrency=1, extra_env=ENV, queue=first.queue
        ) as second:
            with transaction.atomic():
                run = services.judge_run_create(
                    judge=judge, selection={"dataset": data["dataset"].pk}
                )
            wait_for(
                lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
                timeout=120,
                message="run to finish",
            )
            logs = first.log() + second.log()
    finally:
        first.stop()

    received = Counter(RECEIVED.findall(logs))
    assert received and max(received.values()) >= 2, (
        f"the broker did not redeliver a chunk while it ran: {received}\n{logs[-3000:]}"
    )
    assert "'busy'" in logs  # the copy found the lease held and did nothing

    run.refresh_from_db()
    asked = [r.last_message for r in llm_server.requests]
    assert len(asked) == N, f"{len(asked) - N} extra LLM request(s)"
    assert len(set(asked)) == N
    assert Judgment.objects.count() == N
    assert JudgeRunItem.objects.filter(run=run).values("judgment").distinct().count() == N
    assert (run.n_total, run.n_done, run.n_failed) == (N, N, 0)
