"""Nobody sees an action their role cannot take, and an expected 403 is one
line in the server log, not a traceback. In chromium, as a researcher and as an admin."""

from __future__ import annotations

import logging

import pytest

from tests.judging.factories import make_judge
from tests.mining.factories import done_batch
from tests.support.browser_roles import log_in


@pytest.fixture
def console(transactional_db, make_user):
    make_user("res", role="researcher")
    make_user("adm", role="admin")
    make_judge(name="offline-judge")
    return {"batch": done_batch()}


def action_options(page) -> list[str]:
    return page.locator("select[name=action] option").all_inner_texts()


def test_a_researcher_is_not_offered_launch_cancel_or_resume(console, live_server, page):
    base = live_server.url
    log_in(page, base, "res")
    page.goto(base + "/admin/judging/judgerun/")
    assert page.get_by_text("Launch a judge run").count() == 0
    page.goto(base + "/admin/judging/judge/")
    assert not any("Launch" in o for o in action_options(page)), action_options(page)
    page.goto(base + "/admin/mining/miningbatch/")
    options = action_options(page)
    assert not any("Cancel" in o or "Resume" in o for o in options), options
    page.goto(base + "/admin/judging/judgerunestimate/")
    assert page.locator("select[name=action]").count() == 0 or not any(
        "Cancel" in o for o in action_options(page)
    )
    # ... and what is not offered is still refused when asked for directly
    assert page.goto(base + "/admin/judging/judgerun/launch/").status == 403


def test_an_admin_is_offered_them(console, live_server, page):
    base = live_server.url
    log_in(page, base, "adm")
    page.goto(base + "/admin/judging/judgerun/")
    page.get_by_role("link", name="Launch a judge run").click()
    page.wait_for_url("**/admin/judging/judgerun/launch/")
    page.goto(base + "/admin/judging/judge/")
    assert any("Launch a judge run" in o for o in action_options(page))
    page.goto(base + "/admin/mining/miningbatch/")
    options = action_options(page)
    assert any("Cancel" in o for o in options) and any("Resume" in o for o in options)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        self.text: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.text.append(self.format(record))


def test_an_expected_403_is_one_log_line(console, live_server, page):
    """The configured django.request logger (settings.LOGGING) writes a refusal as one line
    (no traceback) and does not hand it on to a second handler."""
    lines = Lines()
    logger = logging.getLogger("django.request")
    logger.addHandler(lines)
    root_lines = Lines()
    logging.getLogger().addHandler(root_lines)
    try:
        log_in(page, live_server.url, "res")
        assert page.goto(live_server.url + "/admin/judging/judgerun/launch/").status == 403
        assert page.goto(live_server.url + "/study/manage/999999/").status == 404
    finally:
        logger.removeHandler(lines)
        logging.getLogger().removeHandler(root_lines)
    refusals = [t for t in lines.text if "/admin/judging/judgerun/launch/" in t]
    assert len(refusals) == 1, lines.text
    assert refusals[0].startswith("WARNING Forbidden (Permission denied)")
    assert "\n" not in refusals[0] and "Traceback" not in refusals[0], refusals[0]
    assert not any("judgerun/launch" in t for t in root_lines.text), root_lines.text
