"""Judging API (roles) and the admin console (estimate before launch, progress, cancel)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from judging.models import JudgeRun, Judgment
from judging.services import runs as services
from tests.judging.support import judge_responder, make_data

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def roles(db):
    from core.roles import ensure_roles

    ensure_roles()


def judge_for(server, name="api-judge"):
    return services.judge_create(
        name=name,
        backend="openai",
        base_url=server.base_url,
        model="m",
        concurrency=4,
        price_input_per_mtok=Decimal("1"),
        price_output_per_mtok=Decimal("4"),
    )


def client_for(user):
    c = APIClient()
    c.force_authenticate(user)
    return c


@pytest.fixture
def enqueued(monkeypatch):
    """Record the runs enqueued after commit instead of sending them to a broker."""
    calls: list[int] = []
    monkeypatch.setattr(
        "judging.services.runs.enqueue_run",
        lambda *, run_id, backend, countdown=None: calls.append(run_id),
    )
    return calls


def test_api_roles_launch_cancel_list(llm_server, make_user, roles, enqueued):
    llm_server.responder = judge_responder
    data = make_data(n=3, bad_every=2)
    judge = judge_for(llm_server)
    admin_c = client_for(make_user("ada", role="admin"))
    res_c = client_for(make_user("rex", role="researcher"))
    ann_c = client_for(make_user("ann", role="annotator"))

    assert ann_c.get("/api/judges/").status_code == 403
    listing = res_c.get("/api/judges/")
    assert listing.status_code == 200 and listing.json()["results"][0]["name"] == "api-judge"
    assert "api_key" not in str(listing.json()).replace("api_key_env", "")

    body = {"judge": "api-judge", "selection": {"dataset": data["dataset"].pk}}
    assert res_c.post("/api/judge-runs/", body, format="json").status_code == 403
    est = admin_c.post("/api/judge-runs/estimate/", body, format="json")
    assert (
        est.status_code == 200
        and est.json()["n_items"] == 3
        and Decimal(est.json()["est_cost"]) > 0
    )
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
    services.judge_run_execute_chunk(run_id=run_id)  # what the worker would do

    detail = res_c.get(f"/api/judge-runs/{run_id}/").json()
    assert (
        detail["status"] == "succeeded"
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
        judge=judge_for(llm_server, "j2"), selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    cancelled = admin_c.post(f"/api/judge-runs/{run2.pk}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"


def test_admin_estimate_then_launch_then_progress(llm_server, make_user, roles, client, enqueued):
    data = make_data(n=4)
    judge = judge_for(llm_server)
    admin_user = make_user("root", role="admin", staff=True)
    client.force_login(admin_user)
    url = reverse("admin:judging_judgerun_launch")
    page = client.post(url, {"judge": judge.pk, "dataset": data["dataset"].pk})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="est-items">4<' in html and 'id="est-cost"' in html and 'id="launch"' in html
    assert JudgeRun.objects.count() == 0  # nothing launched by the estimate
    launched = client.post(url, {"judge": judge.pk, "dataset": data["dataset"].pk, "confirm": "1"})
    run = JudgeRun.objects.get()
    assert enqueued == [run.pk]
    assert launched.status_code == 302 and launched["Location"].endswith(
        f"/judgerun/{run.pk}/change/"
    )
    change = client.get(launched["Location"]).content.decode()
    assert 'hx-trigger="every 1s"' in change and "0 / 4" in change
    llm_server.responder = judge_responder
    services.judge_run_execute_chunk(run_id=run.pk)
    partial = client.get(reverse("admin:judging_judgerun_progress", args=[run.pk])).content.decode()
    assert (
        "4 / 4" in partial and "succeeded" in partial and "hx-trigger" not in partial
    )  # polling stops
    assert Judgment.objects.count() == 4


def test_admin_launch_refused_for_researcher(make_user, roles, client):
    user = make_user("res", role="researcher", staff=True)
    client.force_login(user)
    assert client.get(reverse("admin:judging_judgerun_launch")).status_code == 403
