"""The metric ↔ human page in chromium: a researcher picks a critical-failure study whose
generations carry a scorer-pack metric, types the pack and metric, and reads the detector's
AUC, precision and recall with their intervals."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.judging.factories import comparison_scenario, set_metric

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def scenario(db):
    return comparison_scenario()


def test_researcher_reads_the_detector(scenario, live_server, make_user, page, shots):
    for g, v in zip(scenario["gens"], [0.1, 0.7, 0.5, 0.6, 0.9, 0.2], strict=True):
        set_metric(g, v)
    make_user("rese", role="researcher", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next=/judging/compare/metric-validation/")
    page.fill("input[name=username]", "rese")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()
    expect(page.get_by_role("heading", name="Metric ↔ human validation")).to_be_visible()
    page.select_option("select[name=study]", str(scenario["study"].pk))
    page.fill("input[name=pack]", "scirecipe")
    page.fill("input[name=metric]", "score")
    page.get_by_role("button", name="Show").click()
    table = page.locator("#detector-table")
    expect(table).to_contain_text("AUC")
    expect(table).to_contain_text("0.833")
    expect(table).to_contain_text("95% CI")
    expect(page.locator("#metrics-available")).to_contain_text("scirecipe · score")
    page.screenshot(path=str(shots / "metric-validation.png"), full_page=True)
    page.fill("input[name=threshold]", "abc")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#metric-error")).to_contain_text("threshold: a number")
