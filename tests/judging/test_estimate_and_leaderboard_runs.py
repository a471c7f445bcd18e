"""Cost estimates and stored leaderboards are runs of the engine: the one chunk task works them,
they are cancelled (queued: at once; running: nothing stored) and resumed through the engine,
the orphan scan picks up one whose worker died, and their counters come from rows."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from core.runs import engine
from judging.models import JudgeRun, JudgeRunEstimate, LeaderboardReport
from judging.services import estimates, runs
from judging.services import judges as judge_services
from judging.services import leaderboard as lb
from tests.judging.factories import judged, make_data
from tests.judging.support import work_chunk

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """The run ids whose chunk the engine sends (sent at once: no commit in these tests)."""
    sent: list[int] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue", lambda run, countdown=None, lane=None: sent.append(run.pk)
    )
    monkeypatch.setattr(
        "django.db.transaction.on_commit", lambda fn, using=None, robust=False: fn()
    )
    return sent


def _judge(base_url: str):
    return judge_services.judge_create(
        name="est-judge",
        backend="openai",
        base_url=base_url,
        model="m",
        price_input_per_mtok=Decimal("1"),
        price_output_per_mtok=Decimal("1"),
    )


def _estimate(monkeypatch, llm_server):
    """An estimate of a judge whose server answers (the estimate checks it as the launch does)."""
    monkeypatch.setattr("judging.services.estimates.enqueue_estimate", lambda pk: None)
    data = make_data(n=4)
    return estimates.judge_run_estimate_request(
        judge=_judge(llm_server.base_url), selection={"dataset": data["dataset"].pk}
    )


def test_an_estimate_of_a_judge_whose_server_does_not_answer_is_refused_as_the_launch_is(
    monkeypatch,
):
    monkeypatch.setattr("judging.services.estimates.enqueue_estimate", lambda pk: None)
    data = make_data(n=4)
    judge = _judge("http://127.0.0.1:9/v1")  # nothing listens on port 9
    selection = {"dataset": data["dataset"].pk}
    with pytest.raises(ValidationError) as estimate_refused:
        estimates.judge_run_estimate_request(judge=judge, selection=selection)
    with pytest.raises(ValidationError) as launch_refused:
        runs.judge_run_create(judge=judge, selection=selection)
    message = estimate_refused.value.message_dict["judge"]
    assert message == launch_refused.value.message_dict["judge"]
    assert "cannot be launched: the server at http://127.0.0.1:9/v1 does not answer" in message[0]
    assert not JudgeRunEstimate.objects.exists() and not JudgeRun.objects.exists()


def test_an_estimate_is_worked_by_the_chunk_task_and_counted_from_its_row(llm_server, monkeypatch):
    est = _estimate(monkeypatch, llm_server)
    assert (est.status, est.n_total, est.n_done) == ("queued", 1, 0)
    assert work_chunk(est).status == "done"
    est.refresh_from_db()
    assert est.result["n_items"] == 4 and (est.n_total, est.n_done) == (1, 1)
    assert est.started_at and est.finished_at and not est.lease_owner
    # the counters are the rows', not a tally: a lost result counts 0
    JudgeRunEstimate.objects.filter(pk=est.pk).update(result=None, n_done=7)
    assert engine.executor_for(JudgeRunEstimate).counters(est) == {"n_total": 1, "n_done": 0}


def test_an_estimate_is_cancelled_and_resumed_through_the_engine(llm_server, monkeypatch, enqueued):
    est = _estimate(monkeypatch, llm_server)
    assert engine.cancel(est).status == "cancelled"  # queued: at once
    assert work_chunk(est).status == "inactive"
    engine.resume(est)
    assert est.status == "queued" and enqueued == [est.pk]
    # cancelled while it computes: nothing stored, the run ends cancelled
    real = estimates.selection_estimate

    def cancelled_meanwhile(**kw):
        engine.cancel(JudgeRunEstimate.objects.get(pk=est.pk))
        return real(**kw)

    monkeypatch.setattr("judging.services.estimates.selection_estimate", cancelled_meanwhile)
    assert work_chunk(est).status == "cancelled"
    est.refresh_from_db()
    assert est.status == "cancelled" and est.result is None and est.n_done == 0
    monkeypatch.setattr("judging.services.estimates.selection_estimate", real)
    engine.resume(est)
    assert estimates.judge_run_estimate_work(estimate_id=est.pk).status == "done"


def test_an_orphaned_estimate_is_resumed_by_the_scan(llm_server, monkeypatch, enqueued):
    est = _estimate(monkeypatch, llm_server)
    stale = timezone.now() - timedelta(hours=1)
    JudgeRunEstimate.objects.filter(pk=est.pk).update(
        status="running", lease_owner="dead", heartbeat_at=stale
    )
    assert f"judging.JudgeRunEstimate:{est.pk}" in engine.resume_orphans()
    assert est.pk in enqueued
    assert work_chunk(est).status == "done"  # the dead worker's lease is stale: taken over


def _judged(llm_server, n: int):
    return judged(llm_server, n=n)


@pytest.mark.django_db(transaction=True)
def test_a_large_leaderboard_is_a_run_resumed_when_asked_again(llm_server, monkeypatch, enqueued):
    monkeypatch.setattr("judging.services.leaderboard.INLINE_MAX", 0)
    _judged(llm_server, 3)
    first = lb.leaderboard_get(judges=None, study=None)
    report = LeaderboardReport.objects.get()
    assert first["pending"] and first["status"] == "queued" and enqueued == [report.pk]
    assert lb.leaderboard_get(judges=None, study=None)["pending"]  # asked again: one run
    assert enqueued == [report.pk]
    assert work_chunk(report).status == "done"
    report.refresh_from_db()
    assert (report.n_total, report.n_done) == (1, 1) and report.result["rows"]
    assert lb.leaderboard_get(judges=None, study=None)["fresh"]
    # asked with refresh: the finished run is resumed (its last result shown meanwhile)
    again = lb.leaderboard_get(judges=None, study=None, refresh=True)
    assert again["pending"] and again["report"] == report.result and enqueued == [report.pk] * 2


@pytest.mark.django_db(transaction=True)
def test_a_leaderboard_cancelled_while_computing_keeps_its_last_result(
    llm_server, monkeypatch, enqueued
):
    monkeypatch.setattr("judging.services.leaderboard.INLINE_MAX", 0)
    _judged(llm_server, 2)
    lb.leaderboard_get(judges=None, study=None)
    report = LeaderboardReport.objects.get()
    real = lb.sel.judge_leaderboard

    def cancelled_meanwhile(**kw):
        engine.cancel(LeaderboardReport.objects.get(pk=report.pk))
        return real(**kw)

    monkeypatch.setattr(lb.sel, "judge_leaderboard", cancelled_meanwhile)
    assert work_chunk(report).status == "cancelled"
    report.refresh_from_db()
    assert report.result is None and report.n_done == 0
    monkeypatch.setattr(lb.sel, "judge_leaderboard", real)
    got = lb.leaderboard_get(judges=None, study=None)  # asked again: resumed
    assert got["pending"] and got["status"] == "queued"
    assert lb.leaderboard_compute(report_id=report.pk).status == "done"


@pytest.mark.django_db(transaction=True)
def test_a_newer_ask_while_computing_computes_again(llm_server, monkeypatch, enqueued):
    monkeypatch.setattr("judging.services.leaderboard.INLINE_MAX", 0)
    _judged(llm_server, 2)
    lb.leaderboard_get(judges=None, study=None)
    report = LeaderboardReport.objects.get()
    real, calls = lb.sel.judge_leaderboard, []

    def asked_meanwhile(**kw):
        calls.append(1)
        if len(calls) == 1:
            LeaderboardReport.objects.filter(pk=report.pk).update(
                asked_at=timezone.now() + timedelta(seconds=1), wanted="newer"
            )
        return real(**kw)

    monkeypatch.setattr(lb.sel, "judge_leaderboard", asked_meanwhile)
    assert work_chunk(report).status == "more" and work_chunk(report).status == "done"
    assert len(calls) == 2
