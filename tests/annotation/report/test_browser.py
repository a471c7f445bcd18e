"""In a real browser: the report updates by itself when a label arrives, and a researcher
adjudicates an item from the queue."""

from __future__ import annotations

import re

import pytest

from annotation.models import Adjudication
from tests.annotation.factories import NO, label_study, make_study

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
]


def login(page, live_server, make_user, next_url):
    make_user("browser-researcher", role="researcher", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "browser-researcher")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()


def test_report_updates_live_and_adjudication_in_the_browser(
    live_server, page, shots, make_user, settings
):
    settings.ANNOTATION_REPORT_POLL_SECONDS = 1
    study = make_study(n_items=2, overlap=3, items_per_participant=2, attention_rate=0.0)
    plan = {0: {"A": 2, "B": NO, "C": NO}, 1: {"A": NO, "B": NO, "C": NO}}
    label_study(study, plan, ["A", "B"])
    login(page, live_server, make_user, f"/study/report/{study.pk}/")
    page.get_by_text("4 labels so far").wait_for()
    before = page.locator("#annotator-table tbody tr").count()
    label_study(study, plan, ["C"])  # a third annotator submits while the page is open
    page.get_by_text("6 labels so far").wait_for(timeout=10_000)
    assert page.locator("#annotator-table tbody tr").count() == before + 1
    assert "NaN" not in page.content()
    page.screenshot(path=str(shots / "report-live.png"), full_page=True)

    page.get_by_role("link", name="Adjudicate disagreements").click()
    page.get_by_role("link", name=re.compile(r"Item \d+")).first.click()
    page.get_by_text("A: step 2 is wrong").wait_for()
    page.get_by_label("Critical failure", exact=True).check()
    page.get_by_label("Failure 1 description").fill("Step 2 uses boiling water on plastic")
    page.get_by_label("Failure 1 L2 steps").fill("2")
    page.fill("#note", "A is right")
    page.get_by_role("button", name="Save and go to the next item").click()
    page.get_by_text("adjudicated label saved").wait_for()
    a = Adjudication.objects.get()
    assert a.has_failure and a.failures[0]["l2_steps"] == [2] and a.note == "A is right"
    page.screenshot(path=str(shots / "report-adjudication-queue.png"), full_page=True)
