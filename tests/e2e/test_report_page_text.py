"""The agreement report's text (chromium): a closed study's report says its
numbers are final instead of "updates by itself every 10 seconds while the study runs", and the
study's name under the title has no stray "·" before it."""

from __future__ import annotations

import pytest

from annotation.models import Study
from tests.annotation.factories import make_labelled_study
from tests.support.browser_roles import log_in, placeholders

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_closed_study_report_is_final_and_titled_cleanly(live_server, page, make_user):
    make_user("res", role="researcher")
    study = make_labelled_study()
    log_in(page, live_server.url, "res")
    url = f"{live_server.url}/study/report/{study.pk}/"
    page.goto(url)
    assert "Updates by itself" in page.locator("#report-body").inner_text()  # still running
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    page.goto(url)
    body = page.locator("#report-body").inner_text()
    assert "Updates by itself" not in body and "final numbers" in body
    assert page.locator("#report-body [hx-trigger]").count() == 0  # and it no longer polls
    title = page.locator("h1").inner_text()
    assert "·" not in title and study.name in title
    assert not placeholders(page), placeholders(page)
