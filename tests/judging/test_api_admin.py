"""Judging API (roles) and the admin console (estimate before launch, progress, cancel)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from judging.models import JudgeRun, JudgeRunEstimate, Judgment
from judging.services import runs as services
from judging.services.estimates import judge_run_estimate_work
from tests.core.factories import api_client
from tests.judging.factories import PRICED, make_data, make_judge
from tests.judging.support import judge_responder, work_chunk

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def enqueued_estimates(monkeypatch):
    """Record the estimates sent to a worker instead of sending them to a broker."""
    calls: list[int] = []
    monkeypatch.setattr("judging.services.estimates.enqueue_estimate", calls.append)
    return calls


def test_api_roles_launch_cancel_list(llm_server, make_user, roles, enqueued, enqueued_estimates):
    llm_server.responder = judge_responder
    data = make_data(n=3, bad_every=2)
    judge = make_judge(name="api-judge", base_url=llm_server.base_url, preset=PRICED)
    admin_c = api_client(make_user("ada", role="admin"))
    res_c = api_client(make_user("rex", role="researcher"))
    ann_c = api_client(make_user("ann", role="annotator"))

    assert ann_c.get("/api/judges/").status_code == 403
    listing = res_c.get("/api/judges/")
    assert listing.status_code == 200 and listing.json()["results"][0]["name"] == "api-judge"
    assert "api_key" not in str(listing.json()).replace("api_key_env", "")

    body = {"judge": "api-judge", "selection": {"dataset": data["dataset"].pk}}
    assert res_c.post("/api/judge-runs/", body, format="json").status_code == 403
    asked = admin_c.post("/api/judge-runs/estimate/", body, format="json")
    assert asked.status_code == 202 and asked.json()["status"] == "queued"
    assert (
        asked["Location"]
        == asked.json()["url"]
        == f"/api/judge-runs/estimates/{asked.json()['id']}/"
    )
    assert enqueued_estimates == [asked.json()["id"]]  # sent to a worker on commit
    judge_run_estimate_work(estimate_id=asked.json()["id"])  # what the worker does
    est = admin_c.get(asked.json()["url"])
    assert est.status_code == 200 and est.json()["status"] == "done"
    assert est.json()["result"]["n_items"] == 3 and Decimal(est.json()["result"]["est_cost"]) > 0
    assert res_c.get(asked.json()["url"]).status_code == 403
    bad = admin_c.post(
        "/api/judge-runs/",
        {"judge": "api-judge", "selection": {"generators": ["zzz"]}},
        format="json",
    )
    assert bad.status_code == 400 and "generators" in str(bad.json())

    created = admin_c.post("/api/judge-runs/", body, format="json")
    assert created.status_code == 201 and created.json()["n_total"] == 3
    run_id = created.json()["id"]
    assert enqueued == [run_id]  # the task is enqueued on commit
    work_chunk(JudgeRun.objects.get(pk=run_id))  # what the worker would do

    detail = res_c.get(f"/api/judge-runs/{run_id}/").json()
    assert (
        detail["status"] == "done"
        and detail["n_done"] == 3
        and detail["progress"]["fraction"] == 1.0
    )
    judgments = res_c.get(f"/api/judgments/?run={run_id}").json()
    assert judgments["count"] == 3
    assert sum(j["has_failure"] for j in judgments["results"]) == 2
    score = res_c.get(f"/api/judges/{judge.pk}/how2score/").json()
    assert score["generators"][0]["n_examples"] == 3
    assert res_c.post(f"/api/judge-runs/{run_id}/cancel/").status_code == 403
    run2 = services.judge_run_create(
        judge=make_judge(name="j2", base_url=llm_server.base_url, preset=PRICED),
        selection={"dataset": data["dataset"].pk},
        enqueue=False,
    )
    cancelled = admin_c.post(f"/api/judge-runs/{run2.pk}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = admin_c.post(f"/api/judge-runs/{run2.pk}/cancel/")
    assert again.status_code == 400 and "only queued or running" in again.json()["detail"][0]
    assert res_c.post(f"/api/judge-runs/{run2.pk}/resume/").status_code == 403
    resumed = admin_c.post(f"/api/judge-runs/{run2.pk}/resume/", {}, format="json")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    assert enqueued == [run_id, run2.pk]
    done = admin_c.post(f"/api/judge-runs/{run_id}/resume/", {}, format="json")
    assert done.status_code == 400 and "nothing to resume" in done.json()["detail"][0]
    listing = res_c.get("/api/judge-runs/?status=queued").json()
    assert [r["id"] for r in listing["results"]] == [run2.pk]
    assert listing["results"][0]["worker_gone"] is False


def test_admin_estimate_then_launch_then_progress(
    llm_server, make_user, roles, client, enqueued, enqueued_estimates
):
    data = make_data(n=4)
    judge = make_judge(name="api-judge", base_url=llm_server.base_url, preset=PRICED)
    admin_user = make_user("root", role="admin", staff=True)
    client.force_login(admin_user)
    url = reverse("admin:judging_judgerun_launch")
    page = client.post(url, {"judge": judge.pk, "dataset": data["dataset"].pk})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="est-pending"' in html and 'hx-trigger="every 1s"' in html  # a worker estimates
    assert 'id="launch"' not in html and len(enqueued_estimates) == 1
    poll = reverse("admin:judging_judgerun_estimate", args=enqueued_estimates)
    html = client.get(poll + "?wait=1&seen=queued").content.decode()
    assert 'hx-trigger="every 1.5s"' in html  # nothing changed: it waits longer
    judge_run_estimate_work(estimate_id=enqueued_estimates[0])  # what the worker does
    html = client.get(poll + "?wait=1.5&seen=queued").content.decode()
    assert 'id="est-items">4<' in html and 'id="est-cost"' in html and 'id="launch"' in html
    assert "hx-trigger" not in html  # polling stops
    assert JudgeRun.objects.count() == 0  # nothing launched by the estimate
    launched = client.post(
        url,
        {
            "judge": judge.pk,
            "dataset": data["dataset"].pk,
            "confirm": "1",
            "estimate": enqueued_estimates[0],
        },
    )
    run = JudgeRun.objects.get()
    assert enqueued == [run.pk] and run.prepared_at is None and not run.items.exists()
    assert run.estimated_cost == Decimal(JudgeRunEstimate.objects.get().result["est_cost"])
    assert launched.status_code == 302 and launched["Location"].endswith(
        f"/judgerun/{run.pk}/change/"
    )
    change = client.get(launched["Location"]).content.decode()
    assert 'hx-trigger="every 1s"' in change and "0 / 4" in change
    llm_server.responder = judge_responder
    work_chunk(run)
    partial = client.get(reverse("admin:judging_judgerun_progress", args=[run.pk])).content.decode()
    assert "4 / 4" in partial and "done" in partial and "hx-trigger" not in partial  # polling stops
    assert 'id="resume-run"' not in partial and 'id="cancel-run"' not in partial
    assert Judgment.objects.count() == 4


def test_admin_launch_refused_for_researcher(make_user, roles, client):
    user = make_user("res", role="researcher", staff=True)
    client.force_login(user)
    assert client.get(reverse("admin:judging_judgerun_launch")).status_code == 403


def test_admin_cancel_resume_and_take_over_only_when_the_worker_is_gone(
    llm_server, make_user, roles, client, enqueued
):
    from datetime import timedelta

    from django.utils import timezone

    data = make_data(n=2)
    run = services.judge_run_create(
        judge=make_judge(name="api-judge", base_url=llm_server.base_url, preset=PRICED),
        selection={"dataset": data["dataset"].pk},
        enqueue=False,
    )
    client.force_login(make_user("root", role="admin", staff=True))
    progress = reverse("admin:judging_judgerun_progress", args=[run.pk])
    # a live worker holds it: cancel, no take over
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="live", heartbeat_at=timezone.now()
    )
    html = client.get(progress).content.decode()
    assert 'id="cancel-run"' in html and 'id="take-over-run"' not in html
    # its heartbeat is old: the worker is gone, offer to take it over
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    html = client.get(progress).content.decode()
    assert 'id="take-over-run"' in html and "no live worker" in html
    taken = client.post(
        reverse("admin:judging_judgerun_resume", args=[run.pk]),
        {"force": "1"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert 'data-status="queued"' in taken and enqueued == [run.pk]
    # cancelled while queued: resume is offered, and a refusal is shown in the partial
    client.post(reverse("admin:judging_judgerun_cancel", args=[run.pk]))
    html = client.get(progress).content.decode()
    assert 'data-status="cancelled"' in html and 'id="resume-run"' in html
    refused = client.post(
        reverse("admin:judging_judgerun_cancel", args=[run.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "only queued or running runs can be cancelled" in refused
