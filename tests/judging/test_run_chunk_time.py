"""A judge run's chunk bounded in time (``RUN_CHUNK_SECONDS``) against the local
OpenAI-compatible server: past it the chunk stores what it has in flight and hands over, and no
item is asked twice. The engine's side (the lease's beat answering ``DUE``) is tested on the
test-only run type in tests/core/test_runs_chunk_time.py."""

from __future__ import annotations

import pytest

from judging.models import JudgeRunItem, Judgment
from judging.services import runs as services
from tests.judging.factories import make_data, make_judge
from tests.judging.support import judge_responder, work_chunk
from tests.support.llm_fixtures import llm_server  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)  # the writer thread has its own connection


def test_a_judge_chunk_past_its_time_hands_over_and_loses_nothing(llm_server, settings):  # noqa: F811
    llm_server.responder = judge_responder
    llm_server.latency_s = 0.05
    settings.RUN_CHUNK_SECONDS = 0.3  # 40 items at concurrency 2 and 50 ms: about 1 s of work
    data = make_data(n=40)
    judge = make_judge(name="due-judge", base_url=llm_server.base_url, concurrency=2)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    outcomes = []
    while not outcomes or outcomes[-1] == "more":
        outcomes.append(work_chunk(run).status)
        assert len(outcomes) < 40
    run.refresh_from_db()
    assert outcomes[0] == "more" and outcomes[-1] == "done" and len(outcomes) >= 2, outcomes
    assert (run.status, run.n_done) == ("done", 40)
    assert Judgment.objects.count() == 40
    assert JudgeRunItem.objects.filter(run=run, judgment__isnull=True).count() == 0
    assert len(llm_server.requests) == 40  # each chunk stored what it had sent: none asked twice
