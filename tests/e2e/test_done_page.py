"""The done page of a study without a Prolific id (the demo's) shows the
completion code and stays; a Prolific study's done page still returns to Prolific."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Participant
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


def reach_done(page, base: str, study, pid: str) -> None:
    """Enter with Prolific-style parameters (as the demo's visitor link does), consent, and be
    done (the labelling itself is the flow tests')."""
    enter = reverse("annotation:enter", args=[study.slug])
    page.goto(f"{base}{enter}?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=X1")
    page.get_by_role("button", name="I agree").click()
    page.wait_for_load_state()
    Participant.objects.filter(study=study, prolific_pid=pid).update(stage=Participant.Stage.DONE)
    page.goto(base + reverse("annotation:done", args=[study.slug]))


def test_a_study_without_a_prolific_id_shows_its_code_and_stays(live_server, page):
    study = make_study(n_items=2, items_per_participant=1)
    assert not study.prolific_study_id
    reach_done(page, live_server.url, study, "visitor-1")
    done_url = page.url
    assert page.locator("#completion-code").inner_text() == study.completion_code
    assert page.locator("meta[http-equiv=refresh]").count() == 0
    assert page.locator("#prolific-link").count() == 0
    assert "prolific" not in page.locator("main").inner_text().lower()
    page.wait_for_timeout(6_000)  # the old page left for Prolific after 5 s
    assert page.url == done_url


def test_a_prolific_study_still_returns_to_prolific(live_server, page):
    study = make_study(n_items=2, items_per_participant=1, prolific_study_id="S1")
    reach_done(page, live_server.url, study, "PID-1")
    assert page.locator("#completion-code").inner_text() == study.completion_code
    href = page.locator("#prolific-link").get_attribute("href")
    assert href.endswith(f"cc={study.completion_code}")
    assert page.locator("meta[http-equiv=refresh]").count() == 1
