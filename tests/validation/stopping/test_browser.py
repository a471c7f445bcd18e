"""The target panel in a real browser: the progress page loads it in place, it follows the
labels without a reload and shows the note once the study stops; the researcher sees no
button, an admin's one click resumes the study."""

from __future__ import annotations

import pytest

from annotation.models import Study
from tests.support.browser_roles import log_in, placeholders, too_wide
from tests.validation.stopping.conftest import label_many, label_next, make_target_study
from validation.active.stats import MIN_LABELLED_TO_STOP
from validation.stopping.services import study_check_target

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_panel_follows_the_labels_and_resumes_for_admins(live_server, page, browser, make_user):
    study = make_target_study(target=0.08)
    label_many(study, MIN_LABELLED_TO_STOP - 10)
    make_user("panel-researcher", role="researcher")
    make_user("panel-admin", role="admin")
    log_in(page, live_server.url, "panel-researcher")
    page.goto(f"{live_server.url}{study.get_absolute_url()}")
    panel = page.locator("#study-target")
    panel.locator("#target-interval").wait_for()
    assert "±8.00 points" in panel.inner_text() and "target half-width" in panel.inner_text()
    first = panel.locator("#target-half-width").inner_text()
    assert placeholders(page) == [] and too_wide(page) is None

    outcome = ""
    for _ in range(50):  # labels arrive while the page is open, until the target stops it
        assert label_next(study, "P1")
        outcome = study_check_target(study=study)
        if outcome.startswith("reached"):
            break
    assert outcome == "reached: study paused"
    note = panel.locator("#target-note")
    note.wait_for(timeout=30_000)  # the panel's next poll, no reload
    assert note.inner_text().startswith("Stopped on ")
    assert panel.locator("#target-half-width").inner_text() != first
    assert "An admin can resume it." in note.inner_text()
    assert panel.locator("#target-resume").count() == 0
    assert placeholders(page) == []

    admin = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    log_in(admin, live_server.url, "panel-admin")
    admin.goto(f"{live_server.url}{study.get_absolute_url()}")
    admin.locator("#target-resume").click()
    admin.get_by_text("Resumed: new items are handed out again.").wait_for()
    admin.locator("#target-note").get_by_text("does not stop it again").wait_for()
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.target_resumed_at is not None
    admin.context.close()
