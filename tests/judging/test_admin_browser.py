"""Real browser (Playwright + Debian chromium): the admin estimates, launches a judge run and
watches the htmx progress bar move to the end without reloading the page."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from judging.models import JudgeRun
from tests.judging.factories import make_data, make_judge
from tests.judging.support import judge_responder, work_chunk

CHROMIUM = "/usr/bin/chromium"
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser):
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    yield pg
    context.close()


def test_launch_with_estimate_then_live_progress(
    page, live_server, llm_server, make_user, monkeypatch
):
    from django.db import connections
    from django.test import Client

    from core.roles import ensure_roles

    # live-server request threads close their connection after each request (no leftover
    # sessions when the test database is dropped)
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    ensure_roles()
    # half the replies, then the rest only once the page has shown a count between 0 and 12:
    # the page polls with back-off (1, 1.5, 2.25 s…), and a loaded machine could otherwise
    # finish the run between two polls
    shown_moving = threading.Event()
    answered = []

    def responder(req):
        answered.append(1)
        if len(answered) > 6:
            shown_moving.wait(timeout=20)
        return judge_responder(req)

    llm_server.responder = responder
    llm_server.latency_s = 0.2
    data = make_data(n=12, bad_every=4)
    judge = make_judge(
        name="browser-judge",
        base_url=llm_server.base_url,
        concurrency=2,
        price_input_per_mtok=Decimal("3"),
        price_output_per_mtok=Decimal("12"),
    )
    # the worker's part, in a thread of this process (the broker is not under test here)
    workers: list[threading.Thread] = []

    def work(run):
        from django.db import connection

        try:
            work_chunk(run)
        finally:
            connection.close()

    def enqueue(run, countdown=None):
        t = threading.Thread(target=work, args=(run,), daemon=True)
        workers.append(t)
        threading.Timer(1.5, t.start).start()  # let the page show the run at 0 first

    monkeypatch.setattr("core.runs.engine.enqueue", enqueue)

    def estimate_later(estimate_id):  # the worker's part of the estimate
        from django.db import connection

        from judging.services.estimates import judge_run_estimate_work

        def work():
            try:
                judge_run_estimate_work(estimate_id=estimate_id)
            finally:
                connection.close()

        t = threading.Timer(0.5, work)
        workers.append(t)
        t.start()

    monkeypatch.setattr("judging.services.estimates.enqueue_estimate", estimate_later)
    client = Client()
    client.force_login(make_user("boss", role="admin", staff=True))
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )

    page.goto(f"{live_server.url}/admin/judging/judgerun/launch/")
    page.select_option("select[name=judge]", str(judge.pk))
    page.select_option("select[name=dataset]", str(data["dataset"].pk))
    page.click("#preview")
    expect(page.locator("#est-pending")).to_be_visible()  # computed by a worker, then polled
    expect(page.locator("#est-items")).to_have_text("12")
    assert page.inner_text("#est-requests") == "12"
    assert Decimal(page.inner_text("#est-cost")) > 0
    assert JudgeRun.objects.count() == 0
    page.click("#launch")
    page.wait_for_selector("#run-progress")
    assert page.inner_text("#run-count") == "0 / 12"
    page.evaluate("window.__stayed = true")  # a reload would lose this
    seen = set()
    try:
        for _ in range(300):
            seen.add(page.inner_text("#run-count"))
            if seen - {"0 / 12", "12 / 12"}:
                shown_moving.set()
            if page.inner_text("#run-status") == "done":
                break
            page.wait_for_timeout(100)
    finally:
        shown_moving.set()
    assert page.inner_text("#run-status") == "done"
    assert page.inner_text("#run-count") == "12 / 12"
    assert page.evaluate("window.__stayed") is True
    assert len(seen - {"0 / 12", "12 / 12"}) >= 1, seen  # watched it move
    run = JudgeRun.objects.get()
    assert run.n_done == 12 and run.cost > 0
    for t in workers:
        t.join(timeout=10)
