"""A judge run from the console, in chromium with a real Celery worker: the demo's replay
judge (recorded replies, no model) launched by the demo admin over the demo dataset ends
"done" with the published verdicts, and a run page shows how its run ended in its fixed part
(status, counts) without anyone reloading it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from demo.management.commands.load_demo import DEMO_DATASET, DEMO_JUDGE
from demo.replay_judge import REPLAY_JUDGE
from judging.models import JudgeRun, Judgment
from judging.services import runs as services
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import judge_responder
from tests.support.browser_roles import load_demo, log_in

pytestmark = pytest.mark.django_db(transaction=True)
DONE = re.compile(r"^\s*done\s*$", re.IGNORECASE)  # the status as the console shows it


def test_an_admin_launches_the_demo_judge_from_the_console_and_it_ends_done(
    settings, tmp_path, monkeypatch, celery_worker_process, live_server, page
):
    load_demo(settings, tmp_path, monkeypatch)
    base = live_server.url
    log_in(page, base, "admin")
    page.goto(base + "/admin/judging/judgerun/launch/")
    page.select_option("#id_judge", label=REPLAY_JUDGE)
    page.select_option("#id_dataset", label=f"{DEMO_DATASET}@v1")
    page.click("#preview")
    page.locator("#launch").click(timeout=60_000)  # once a worker has estimated the run
    page.wait_for_url("**/admin/judging/judgerun/*/change/")
    expect(page.locator(".field-status .readonly")).to_have_text(DONE, timeout=60_000)
    run = JudgeRun.objects.get(pk=int(page.url.rstrip("/").split("/")[-2]))
    assert (run.status, run.n_done, run.n_failed, run.n_parse_failed) == ("done", 11, 0, 0)
    published = dict(
        Judgment.objects.filter(judge__name=DEMO_JUDGE).values_list("content_hash", "has_failure")
    )
    replayed = dict(
        Judgment.objects.filter(judge__name=REPLAY_JUDGE).values_list("content_hash", "has_failure")
    )
    assert replayed == published  # the recorded replies are the paper's verdicts


def test_the_run_page_shows_how_the_run_ended_without_a_reload(
    celery_worker_process,
    llm_server,
    make_user,
    live_server,
    page,
):
    llm_server.responder = judge_responder
    llm_server.latency_s = 3  # the run is still working when the page loads
    data = make_data(n=2)
    judge = make_judge(name="slow-judge", base_url=llm_server.base_url, preset=FAIL_FAST)
    make_user("adm", role="admin")
    base = live_server.url
    log_in(page, base, "adm")
    run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    page.goto(f"{base}/admin/judging/judgerun/{run.pk}/change/")
    status = page.locator(".field-status .readonly")
    assert status.inner_text().lower() in ("queued", "running")
    page.evaluate("window.__stayed = true")  # a reload would lose this
    expect(status).to_have_text(DONE, timeout=60_000)
    expect(page.locator(".field-n_done .readonly")).to_have_text("2")
    expect(page.locator("#run-status")).to_have_text("done")
    expect(page.locator(".field-finished_at .readonly")).not_to_have_text("-")
    assert page.evaluate("window.__stayed") is True  # updated in place, not reloaded
