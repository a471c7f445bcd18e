"""Migrating cost estimates and stored leaderboards onto the run engine (judging 0005) keeps
each row's state, result, error and dates; the old status words are the engine's (done and
failed stay); a row left queued or running becomes an orphaned run the engine's scan resumes.
Reversible."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.migrations import back_to_the_leaf, migrate_to  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("back_to_the_leaf")]

BEFORE = [("judging", "0004_background_launch")]
AFTER = [("judging", "0005_estimates_and_leaderboards_are_runs")]
# old status -> new status
CASES = {"queued": "running", "running": "running", "done": "done", "failed": "failed"}


_migrate = migrate_to


def test_estimates_and_leaderboards_become_runs():
    old = _migrate(BEFORE)
    Judge = old.get_model("judging", "Judge")
    Estimate = old.get_model("judging", "JudgeRunEstimate")
    Report = old.get_model("judging", "LeaderboardReport")
    judge = Judge.objects.create(name="j", judge_id="j-key", backend="openai", model="m")
    now = timezone.now()
    est, rep = {}, {}
    for i, status in enumerate(CASES):
        done = status == "done"
        e = Estimate.objects.create(
            judge=judge,
            selection={"dataset": 1},
            status=status,
            result={"n_items": 3, "est_cost": "0.1"} if done else None,
            error="boom" if status == "failed" else "",
            finished_at=now if status in ("done", "failed") else None,
        )
        est[status] = (e.pk, e.created_at)
        rep[status] = Report.objects.create(
            key=f"k{i}",
            judges=["j"],
            status=status,
            signature="sig" if done else "",
            wanted="want",
            result={"rows": [1]} if done else None,
            error="bad" if status == "failed" else "",
            computed_at=now - timedelta(minutes=1) if done else None,
            asked_at=now - timedelta(minutes=2),
        ).pk

    new = _migrate(AFTER)
    Estimate = new.get_model("judging", "JudgeRunEstimate")
    Report = new.get_model("judging", "LeaderboardReport")
    for old_status, new_status in CASES.items():
        e = Estimate.objects.get(pk=est[old_status][0])
        assert e.status == new_status and e.created_at == est[old_status][1]
        assert (e.n_total, e.n_done) == (1, int(old_status == "done"))
        assert e.heartbeat_at is None and e.lease_owner == ""
        r = Report.objects.get(pk=rep[old_status])
        assert r.status == new_status and (r.n_total, r.n_done) == (1, int(old_status == "done"))
        assert r.created_at == now - timedelta(minutes=2) and r.wanted == "want"
    assert Estimate.objects.get(pk=est["done"][0]).result["n_items"] == 3
    assert Estimate.objects.get(pk=est["done"][0]).finished_at == now
    assert Estimate.objects.get(pk=est["failed"][0]).error == "boom"
    assert Estimate.objects.get(pk=est["queued"][0]).finished_at is None
    done = Report.objects.get(pk=rep["done"])
    assert done.result == {"rows": [1]} and done.finished_at == now - timedelta(minutes=1)
    assert Report.objects.get(pk=rep["failed"]).error == "bad"
    Estimate.objects.filter(pk=est["running"][0]).update(status="cancelled")

    old = _migrate(BEFORE)  # back: the old words
    Estimate = old.get_model("judging", "JudgeRunEstimate")
    assert Estimate.objects.get(pk=est["running"][0]).status == "failed"
    assert Estimate.objects.get(pk=est["done"][0]).status == "done"
    _migrate(AFTER)
