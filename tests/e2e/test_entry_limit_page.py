"""A new participant over the study's limit per network address sees, in a real
browser, why (the limit, the study setting, what to do) on a page that passes axe; once the
researcher raises the setting on the progress page, the same link lets them in."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Participant
from tests.annotation.factories import make_study
from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_refusal_page_says_why_and_the_researcher_raises_the_limit(
    live_server, page, make_user
):
    make_user("res", role="researcher")
    study = make_study(n_items=3, new_participants_per_address=1)
    Participant.objects.create(study=study, prolific_pid="FIRST", entry_ip="127.0.0.1")
    enter = reverse("annotation:enter", args=[study.slug])
    link = f"{live_server.url}{enter}?PROLIFIC_PID=SECOND&STUDY_ID=S1&SESSION_ID=X2"
    response = page.goto(link)
    assert response.status == 429
    assert page.get_by_role("heading", level=1).inner_text() == (
        "Too many new participants from your network address"
    )
    text = page.locator(".refused-message").inner_text()
    assert "1 new participant has already joined this study from your network address" in text
    assert "New participants per network address per hour" in text
    assert "ask the researcher to raise that setting" in text
    assert serious_violations(page) == []

    log_in(page, live_server.url, "res")
    page.goto(live_server.url + reverse("annotation:study_progress", args=[study.pk]))
    page.get_by_label("New participants per network address per hour").fill("40")
    page.locator("#entry-limit-form button").click()
    page.wait_for_load_state()
    assert "New participants per network address per hour: 40." in page.content()
    page.context.clear_cookies()
    response = page.goto(link)
    assert response.status == 200 and "/consent/" in page.url
