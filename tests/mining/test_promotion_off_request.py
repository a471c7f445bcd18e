"""Promotion (embedding every candidate) and the batch page's progress are out of
the request. The console and the API only ask for a promotion; a real Celery worker does it and
the page polls its state; the batch page's progress poll reads the batch's row: one query."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from benchmarks.models import Dataset, Procedure
from mining.models import MiningBatch
from mining.services import promotion
from tests.mining.factories import BREAD, done_batch
from tests.support.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def roles(db):
    from core.roles import ensure_roles

    ensure_roles()


@pytest.mark.worker
def test_promotion_is_done_by_a_real_worker_and_polled(
    make_user, roles, client, celery_worker_process
):
    ref = Dataset.objects.create(name="train", version="v1")
    Procedure.objects.create(dataset=ref, source_example_id="r1", goal=BREAD[0], steps=BREAD[1])
    batch = done_batch()
    client.force_login(make_user("adm", role="admin"))
    asked = client.post(
        reverse("mining:batch_promote", args=[batch.pk]),
        {
            "dataset_name": "mined",
            "version": "v1",
            "per_topic": 4,
            "seed": 1,
            "dedup_against": ref.pk,
            "threshold": 0.65,
        },
    )
    assert asked.status_code == 302 and asked["Location"] == batch.get_absolute_url()
    page = client.get(asked["Location"]).content.decode()
    assert "Promotion into mined@v1 queued" in page and 'id="promotion-card"' in page
    url = reverse("mining:batch_promotion", args=[batch.pk])
    card = wait_for(
        lambda: 'id="promotion-done"' in (html := client.get(url).content.decode()) and html,
        timeout=120,
        message=f"the promotion; worker log:\n{celery_worker_process.log()[-3000:]}",
    )
    assert "hx-trigger" not in card  # polling stops
    dataset = Dataset.objects.get(name="mined")
    assert re.search(r"5 procedures from 8 candidates \(1 near duplicates removed\)", card), card
    ids = set(Procedure.objects.filter(dataset=dataset).values_list("source_example_id", flat=True))
    assert len(ids) == 5 and "p1" in ids and "p0" not in ids  # p0 is a paraphrase of r1
    state = promotion.promotion_state(MiningBatch.objects.get(pk=batch.pk))
    assert state["status"] == "done" and state["dataset_id"] == dataset.pk
    assert state["per_topic"] == {"health": 4, "transportation": 1}


def test_promotion_api_answers_202_refuses_a_second_and_stores_failures(
    make_user, roles, monkeypatch
):
    sent: list[int] = []
    monkeypatch.setattr("mining.services.promotion.enqueue_promotion", sent.append)
    batch = done_batch()
    api = APIClient()
    api.force_authenticate(make_user("adm", role="admin"))
    path = f"/api/mining/batches/{batch.pk}/promote/"
    res = api.post(path, {"dataset_name": "x", "per_topic": 2}, format="json")
    assert res.status_code == 202 and res.json()["promotion"]["status"] == "queued"
    assert res["Location"] == res.json()["url"] and sent == [batch.pk]
    again = api.post(path, {"dataset_name": "y"}, format="json")
    assert again.status_code == 400 and "already being promoted" in str(again.json())
    Dataset.objects.create(name="x", version="v1")  # taken meanwhile: the worker says so
    state = promotion.batch_promote_work(batch_id=batch.pk)
    assert state["status"] == "failed" and "already exists" in state["error"]
    detail = api.get(res.json()["url"]).json()
    assert detail["options"]["promotion"]["status"] == "failed"
    running = done_batch(status="running")
    refused = api.post(f"/api/mining/batches/{running.pk}/promote/", {"dataset_name": "z"})
    assert refused.status_code == 400 and "once it has ended" in str(refused.json())
    assert sent == [batch.pk] and not Dataset.objects.filter(name="z").exists()


def test_batch_progress_poll_reads_the_row_only_and_backs_off(make_user, roles, client):
    batch = done_batch(status="running")
    MiningBatch.objects.filter(pk=batch.pk).update(n_total=8, n_done=3, ingested=True)
    client.force_login(make_user("res", role="researcher"))
    url = reverse("mining:batch_progress", args=[batch.pk])
    client.get(url)
    with CaptureQueriesContext(connection) as ctx:
        html = client.get(url, {"wait": "2", "seen": "running:3:0:1"}).content.decode()
    sql = [q["sql"] for q in ctx.captured_queries]
    assert sum('"mining_' in q for q in sql) == 1 and not any("miningdocument" in q for q in sql)
    assert all('"mining_miningbatch"' in q or '"django_session"' in q or '"auth_' in q for q in sql)
    assert 'hx-trigger="every 3s"' in html and 'id="batch-done">3<' in html
    assert 'id="yields-table"' not in html  # the yields wait for the end
    MiningBatch.objects.filter(pk=batch.pk).update(status="done", n_done=8)
    last = client.get(url, {"wait": "3", "seen": "running:3:0:1"})
    html = last.content.decode()
    assert last["HX-Retarget"] == "#batch-live" and 'id="yields-table"' in html
    assert "hx-trigger" not in html  # polling stops, the final yields are in


@pytest.mark.e2e
def test_promotion_card_updates_in_the_browser(page, live_server, make_user, roles, monkeypatch):
    """An admin clicks Promote; the page answers at once and the card turns to done (with the
    dataset's link) by itself once the worker's part (here a thread) has run."""
    import threading

    from django.db import connections
    from django.test import Client
    from playwright.sync_api import expect

    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    threads: list[threading.Timer] = []

    def later(batch_id):
        def work():
            try:
                promotion.batch_promote_work(batch_id=batch_id)
            finally:
                connections.close_all()

        t = threading.Timer(1.5, work)  # the page shows the queued card first
        threads.append(t)
        t.start()

    monkeypatch.setattr("mining.services.promotion.enqueue_promotion", later)
    batch = done_batch()
    c = Client()
    c.force_login(make_user("adm", role="admin"))
    page.context.add_cookies(
        [{"name": "sessionid", "value": c.cookies["sessionid"].value, "url": live_server.url}]
    )
    page.goto(f"{live_server.url}{batch.get_absolute_url()}")
    page.fill("input[name=dataset_name]", "from-browser")
    page.fill("input[name=per_topic]", "3")
    page.get_by_role("button", name="Promote").click()
    expect(page.locator("#promotion-pending")).to_be_visible()
    expect(page.locator("#promotion-done")).to_contain_text("from-browser@v1", timeout=20_000)
    expect(page.locator("#promotion-done")).to_contain_text("5 procedures from 8 candidates")
    for t in threads:
        t.join(timeout=10)
    assert Procedure.objects.filter(dataset__name="from-browser").count() == 5
