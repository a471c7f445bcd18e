"""The study comparison page in a real browser (Debian chromium through Playwright)."""
import os
import shutil

import pytest

pytestmark = [pytest.mark.urls("tests.compare.urls"), pytest.mark.django_db(transaction=True)]
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def page():
    if shutil.which(CHROMIUM) is None:
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        pg.set_default_timeout(15_000)
        yield pg
        browser.close()


def test_study_comparison_page_renders(scenario, live_server, make_user, page, tmp_path):
    make_user("res", role="researcher")
    page.goto(f"{live_server.url}/accounts/login/?next=/judging/compare/study/{scenario['study'].pk}/")
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
    assert page.evaluate("getComputedStyle(document.querySelector('.compare-tabs')).display") == "flex"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(tmp_path / "study.png"), full_page=True)
    if os.environ.get("H2R_SHOTS"):
        shutil.copy(tmp_path / "study.png", os.environ["H2R_SHOTS"])
