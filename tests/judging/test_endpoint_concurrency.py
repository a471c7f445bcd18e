"""A judge's ``concurrency`` is the endpoint's limit across every lane and worker process
(benchmarks.llm.concurrency): real Celery workers (two slots each) work one judge run in four
lanes against the local server, which counts the requests it holds at once. The peak stays at
the judge's concurrency with one worker and with two (without the shared limit: 4 per lane, so
8 with one worker and 16 with two), and a worker killed with SIGKILL re-buys at most the
concurrency and half of it (:func:`core.runs.reply_writer.unstored_width`) for the whole
run."""

from __future__ import annotations

import pytest
from django.db import transaction

from core.runs.models import RunLane
from core.runs.reply_writer import unstored_width
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import runs as services
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import judge_responder
from tests.support.inflight import InFlight
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

CONCURRENCY = 4
ENV = {
    "H2R_JUDGE_CHUNK_ITEMS": "40",
    "RUN_LEASE_SECONDS": "3",
    "LLM_CONCURRENCY_LEASE_SECONDS": "3",
}


def _launch(judge, data):
    with transaction.atomic():
        return services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})


def _done(run) -> bool:
    return JudgeRun.objects.get(pk=run.pk).status == "done"


def _worked_chunks(worker) -> int:
    return worker.log().count("core.run_chunk") // 2  # "received" and "succeeded" lines


@pytest.mark.parametrize("n_workers", [1, 2])
def test_peak_in_flight_is_the_judges_concurrency_with_one_and_two_workers(
    llm_server, tmp_path, settings, n_workers
):
    settings.JUDGE_RUN_LANES = 4
    counter = InFlight(reply=judge_responder, latency_s=0.1)
    llm_server.responder = counter
    n = 160
    data = make_data(n=n)
    judge = make_judge(
        name="capped", base_url=llm_server.base_url, preset=FAIL_FAST, concurrency=CONCURRENCY
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with running_worker(tmp_path / "a", concurrency=2, extra_env=ENV) as first:
        others = [
            start_worker(tmp_path / "b", concurrency=2, extra_env=ENV, queue=first.queue)
            for _ in range(n_workers - 1)
        ]
        try:
            run = _launch(judge, data)
            wait_for(lambda: _done(run), timeout=120, message="the run done")
        finally:
            for worker in others:
                worker.stop()
    run.refresh_from_db()
    print(f"peak in flight, {n_workers} worker(s) x 2 slots, 4 lanes: {counter.peak}")
    assert counter.peak <= CONCURRENCY, counter.peak
    assert counter.peak >= 2  # the lanes did overlap
    assert (run.n_done, run.n_failed) == (n, 0)
    assert Judgment.objects.filter(judge=judge).count() == n
    assert len(llm_server.requests) == n  # each content asked once
    if n_workers == 2:  # both workers worked part of the run
        assert _worked_chunks(first) >= 1 and _worked_chunks(others[0]) >= 1


def test_a_worker_killed_mid_run_re_buys_at_most_the_unstored_width(llm_server, tmp_path, settings):
    settings.JUDGE_RUN_LANES = 4
    counter = InFlight(reply=judge_responder, latency_s=0.1)
    llm_server.responder = counter
    n = 200
    data = make_data(n=n)
    judge = make_judge(
        name="capped", base_url=llm_server.base_url, preset=FAIL_FAST, concurrency=CONCURRENCY
    )
    first = start_worker(tmp_path, concurrency=2, extra_env=ENV)
    try:
        run = _launch(judge, data)
        wait_for(
            lambda: (
                Judgment.objects.count() >= 40
                and RunLane.objects.filter(run_id=run.pk).exclude(lease_owner="").count() >= 2
            ),
            timeout=60,
            message="first judgments, two lanes held",
        )
    finally:
        first.kill()  # SIGKILL: its requests in flight and slots are lost
    stored_at_kill = Judgment.objects.count()
    assert stored_at_kill < n
    with running_worker(tmp_path, concurrency=2, extra_env=ENV, queue=first.queue) as second:
        wait_for(
            lambda: _done(run),
            timeout=120,
            message=f"run to finish; worker log:\n{second.log()[-3000:]}",
        )
    run.refresh_from_db()
    assert (run.n_done, run.n_failed, run.n_total) == (n, 0, n)
    assert Judgment.objects.filter(judge=judge).count() == n
    assert JudgeRunItem.objects.filter(run=run, judgment__isnull=True).count() == 0
    asked = [r.last_message for r in llm_server.requests]
    rebought = len(asked) - n
    print(f"re-bought after kill -9 (2 slots, 4 lanes, concurrency {CONCURRENCY}): {rebought}")
    assert 0 <= rebought <= unstored_width(CONCURRENCY) == CONCURRENCY + 2, rebought
    assert counter.peak <= CONCURRENCY, counter.peak
