"""No heavy work in a request. A judge run's launch answers with the run row only
(its items are selected and hashed by the worker holding the run's lease), a cost estimate is
computed by a Celery task and polled, and a progress poll reads the run's row: one query."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from judging.models import JudgeRun, JudgeRunEstimate, JudgeRunItem, Judgment, PromptVersion
from judging.services import estimates
from judging.services import runs as services
from tests.judging.factories import PRICED, make_data, make_judge
from tests.judging.support import judge_responder, work_chunk
from tests.support.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.worker
def test_estimate_and_launch_are_worked_by_a_real_worker(
    llm_server, make_user, roles, celery_worker_process
):
    llm_server.responder = judge_responder
    data = make_data(n=30, bad_every=5)
    judge = make_judge(name="bg-judge", base_url=llm_server.base_url, preset=PRICED)
    api = APIClient()
    api.force_authenticate(make_user("ada", role="admin"))
    body = {"judge": judge.name, "selection": {"dataset": data["dataset"].pk}}

    asked = api.post("/api/judge-runs/estimate/", body, format="json")
    assert asked.status_code == 202 and asked.json()["result"] is None
    url = asked.json()["url"]
    done = wait_for(
        lambda: (r := api.get(url).json())["status"] == "done" and r,
        timeout=60,
        message=f"the estimate; worker log:\n{celery_worker_process.log()[-2000:]}",
    )
    expected = services.judge_run_estimate(judge=judge, selection=body["selection"])
    assert done["result"]["n_items"] == expected["n_items"] == 30
    assert done["result"]["n_requests"] == 30
    assert Decimal(done["result"]["est_cost"]) == expected["est_cost"] > 0

    # no estimate given at launch: the worker's, with chars / 4 for tokens (as before)
    quick = services.judge_run_estimate(judge=judge, selection=body["selection"], tokenizer=False)
    created = api.post("/api/judge-runs/", body, format="json")
    assert created.status_code == 201 and created.json()["n_total"] == 30  # one COUNT
    run = JudgeRun.objects.get(pk=created.json()["id"])
    wait_for(
        lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
        timeout=90,
        message=f"the run; worker log:\n{celery_worker_process.log()[-3000:]}",
    )
    run.refresh_from_db()
    assert run.prepared_at is not None and run.estimated_cost == quick["est_cost"] > 0
    assert (run.n_total, run.n_done, run.n_failed) == (30, 30, 0)
    assert JudgeRunItem.objects.filter(run=run).count() == 30  # inserted once, by the worker
    assert Judgment.objects.filter(has_failure=True).count() == 6


def test_launch_request_leaves_the_items_to_the_worker(llm_server, monkeypatch):
    llm_server.responder = judge_responder
    data = make_data(n=8)
    judge = make_judge(name="bg-judge", base_url=llm_server.base_url, preset=PRICED)
    sent: list[int] = []
    monkeypatch.setattr("core.runs.engine.enqueue", lambda run, countdown=None: sent.append(run.pk))
    with CaptureQueriesContext(connection) as ctx:
        run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    sql = " ".join(q["sql"] for q in ctx.captured_queries)
    assert "judging_judgerunitem" not in sql and "judging_judgment" not in sql  # no hashing here
    assert sent == [run.pk] and run.n_total == 8 and run.prepared_at is None
    # a prepare without the lease does nothing; the worker's does it once
    services.judge_run_prepare(run=run, token="not-the-lease")
    assert not JudgeRunItem.objects.filter(run=run).exists()
    assert work_chunk(run).status == "done"
    run.refresh_from_db()
    assert run.prepared_at is not None and run.n_done == 8
    services.judge_run_prepare(run=run)  # prepared already: nothing inserted twice
    assert JudgeRunItem.objects.filter(run=run).count() == 8


def test_progress_poll_is_one_query_on_the_run_and_backs_off(
    llm_server, make_user, roles, client, monkeypatch
):
    monkeypatch.setattr("core.runs.engine.enqueue", lambda run, countdown=None: None)
    data = make_data(n=5)
    run = services.judge_run_create(
        judge=make_judge(name="bg-judge", base_url=llm_server.base_url, preset=PRICED),
        selection={"dataset": data["dataset"].pk},
    )
    client.force_login(make_user("root", role="admin", staff=True))
    url = reverse("admin:judging_judgerun_progress", args=[run.pk])
    client.get(url)  # session and permissions warmed like a page that polls
    with CaptureQueriesContext(connection) as ctx:
        html = client.get(url + "?wait=1&seen=x").content.decode()
    on_run = [q["sql"] for q in ctx.captured_queries if "judging_judgerun" in q["sql"]]
    assert len(on_run) == 1 and "judging_judgerunitem" not in on_run[0], on_run
    # the rest is what every console request pays: the session, the user, its role
    others = [q["sql"] for q in ctx.captured_queries if "judging_judgerun" not in q["sql"]]
    assert all('"django_session"' in q or '"auth_' in q for q in others), others
    assert 'hx-trigger="every 1.5s"' in html and "selecting and hashing" in html
    # nothing changed since the last poll: it waits longer, up to the idle bound
    mark = f"{run.status}:{run.n_done}:{run.n_failed}:0"
    html = client.get(url, {"wait": "20", "seen": mark}).content.decode()
    assert 'hx-trigger="every 20s"' in html


def test_estimate_failure_is_stored_and_shown(llm_server, make_user, roles, client, monkeypatch):
    sent: list[int] = []
    monkeypatch.setattr("judging.services.estimates.enqueue_estimate", sent.append)
    data = make_data(n=3)
    judge = make_judge(name="bg-judge", base_url=llm_server.base_url, preset=PRICED)
    est = estimates.judge_run_estimate_request(
        judge=judge, selection={"dataset": data["dataset"].pk}
    )
    assert sent == [est.pk] and est.status == "queued"
    # a prompt that cannot be rendered (a placeholder no item fills; the service refuses such a
    # text, so it is written under it)
    PromptVersion.objects.filter(pk=judge.prompt_version_id).update(text="{no_such_field}")
    est = estimates.judge_run_estimate_work(estimate_id=est.pk)
    assert est.status == JudgeRunEstimate.Status.FAILED and est.error and est.result is None
    client.force_login(make_user("root", role="admin", staff=True))
    html = client.get(reverse("admin:judging_judgerun_estimate", args=[est.pk])).content.decode()
    assert 'id="est-error"' in html and "hx-trigger" not in html
    with pytest.raises(Exception, match="generators"):
        estimates.judge_run_estimate_request(judge=judge, selection={"generators": ["zzz"]})
    assert JudgeRunEstimate.objects.count() == 1  # a refused request stores nothing
