"""The judge leaderboard out of the request. A large one is computed by a real
Celery worker while the page polls; once stored it is shown at once (a few aggregate queries)
until the judgments change, when the last one is shown marked as being updated."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging.leaderboard import reads as sel
from judging.models import LeaderboardReport
from tests.judging.factories import judged
from tests.support.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/judging/compare/leaderboard/?study="


@pytest.mark.worker
def test_large_leaderboard_is_computed_by_a_worker_and_stored(
    llm_server, make_user, client, monkeypatch, celery_worker_process
):
    from core.roles import ensure_roles

    ensure_roles()
    monkeypatch.setattr("judging.services.leaderboard.INLINE_MAX", 0)  # every one is "large"
    judge = judged(llm_server, n=9)
    client.force_login(make_user("res", role="researcher"))
    first = client.get(URL).content.decode()
    assert 'id="leaderboard-pending"' in first and "A worker is computing" in first
    assert 'hx-trigger="every 1s"' in first and 'hx-select="#leaderboard-body"' in first
    page = wait_for(
        lambda: (
            'id="leaderboard-pending"' not in (html := client.get(URL).content.decode()) and html
        ),
        timeout=60,
        message=f"the leaderboard; worker log:\n{celery_worker_process.log()[-3000:]}",
    )
    expected = sel.judge_leaderboard(judges=None, study=None)["rows"][0]
    assert expected["n_judgments"] == 9 and f"<td>{expected['n_judgments']}</td>" in page
    assert judge.name in page and "hx-trigger" not in page
    # stored and unchanged: shown at once, a few aggregate queries, nothing recomputed
    with CaptureQueriesContext(connection) as ctx:
        client.get(URL)
    assert not any("judging_judgerunitem" in q["sql"] for q in ctx.captured_queries)
    computed = LeaderboardReport.objects.get().computed_at
    # new judgments: the last leaderboard is shown, marked as being updated, then replaced
    judged(llm_server, n=4, dataset="more", name="lb-judge-2")
    stale = client.get(URL).content.decode()
    assert "Updating: a worker is recomputing" in stale and judge.name in stale
    wait_for(
        lambda: "lb-judge-2" in client.get(URL).content.decode(),
        timeout=60,
        message="the recomputed leaderboard",
    )
    assert LeaderboardReport.objects.get().computed_at > computed


def test_small_leaderboard_is_computed_in_the_request_and_stored(llm_server, make_user, client):
    from core.roles import ensure_roles

    ensure_roles()
    judged(llm_server, n=5)
    client.force_login(make_user("res", role="researcher"))
    page = client.get(URL).content.decode()
    assert "<td>5</td>" in page and "leaderboard-pending" not in page
    report = LeaderboardReport.objects.get()
    assert report.status == "done" and report.result["rows"][0]["n_judgments"] == 5
    again = client.get(URL + "&refresh=1").content.decode()  # recompute on demand
    assert "<td>5</td>" in again
    assert LeaderboardReport.objects.get().computed_at > report.computed_at
