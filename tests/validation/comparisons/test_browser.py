"""The study comparison page in a real browser (Debian chromium through Playwright)."""

import os
import shutil

import pytest

pytestmark = pytest.mark.django_db(transaction=True)
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    yield pg
    context.close()


def test_study_comparison_page_renders(scenario, live_server, make_user, page, tmp_path):
    make_user("res", role="researcher")
    page.goto(
        f"{live_server.url}/accounts/login/?next=/judging/compare/study/{scenario['study'].pk}/"
    )
    page.fill("input[name=username]", "res")
    page.fill("input[name=password]", "pw-Test-12345")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#agreement-table")
    rows = page.locator("#agreement-table tbody tr")
    assert rows.count() == 2
    assert "80.0%" in rows.nth(0).inner_text()
    chart = page.locator("svg#agreement-bars, svg[aria-labelledby^='agreement-bars']").first
    box = chart.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100
    assert page.locator("svg[aria-labelledby^='confusion-']").count() == 2
    # the stylesheet loaded and nothing pushes the page sideways
    assert (
        page.evaluate("getComputedStyle(document.querySelector('.compare-tabs')).display") == "flex"
    )
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(tmp_path / "study.png"), full_page=True)
    if os.environ.get("H2R_SHOTS"):
        shutil.copy(tmp_path / "study.png", os.environ["H2R_SHOTS"])
