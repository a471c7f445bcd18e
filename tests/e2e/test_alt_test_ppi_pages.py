"""The alt-test, its planner and the PPI-corrected ranking in chromium: a researcher opens the
judge validation page, the alt-test section loads in place, a new ε re-runs it, the planner
simulates a study size; on the rankings page the PPI section loads and another study or judge
is chosen — all by keyboard-reachable, labelled controls."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.validation.alt_test.scenario import alt_test_scenario, ppi_scenario
from validation.alt_test.reads import study_alt_test

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _login(page, live_server, make_user, next_url):
    make_user("rese", role="researcher", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "rese")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()


def test_alt_test_section_and_planner(live_server, make_user, page, shots):
    scenario = alt_test_scenario()
    study = scenario["study"]
    url = f"/judging/compare/validation/?study={study.pk}&judge=alt-judge"
    _login(page, live_server, make_user, url.replace("&", "%26"))
    section = page.locator("#alt-test")
    expect(section.locator(".alt-test-verdict")).to_be_visible()
    expect(section).to_contain_text("ε = 0.1")
    expect(section.locator(".alt-test-table tbody tr")).to_have_count(3)
    expect(section.locator(".alt-test-skipped")).to_contain_text("P3 (5)")
    wide = study_alt_test(study=study, judge=scenario["judge"], epsilon=0.3)["sections"][0]
    page.get_by_label("ε (cost-benefit)").fill("0.3")
    section.get_by_role("button", name="Test").click()
    expect(section).to_contain_text("ε = 0.3")
    expect(section.locator(".alt-test-verdict")).to_contain_text(
        f"winning rate ω {wide['winning_rate']:.2f}"
    )
    section.screenshot(path=str(shots / "validation-alt-test.png"))

    planner = page.locator("#alt-test-plan")
    planner.get_by_label("Label categories K").fill("2")
    planner.get_by_label("Judge noise").fill("0.1")
    planner.get_by_role("button", name="Simulate").click()
    expect(planner.locator("#alt-test-plan-table tbody tr")).to_have_count(18)
    expect(planner.locator("#alt-test-plan-summary")).to_contain_text("ω ≥ 0.5 from")
    expect(page.get_by_label("Label categories K")).to_have_value("2")  # the form keeps values
    planner.screenshot(path=str(shots / "validation-alt-test-planner.png"))


def test_ppi_section_on_the_rankings_page(live_server, make_user, page, shots):
    scenario = ppi_scenario()
    _login(page, live_server, make_user, "/judging/compare/rankings/")
    section = page.locator("#how2score-ppi")
    # the first PPI request imports ppi-python (numba): several seconds on a busy CPU
    expect(section).to_contain_text("corrected with the labels of study ppi study", timeout=30_000)
    expect(section.locator("#how2score-ppi-table tbody tr")).to_have_count(2)
    section.get_by_role("combobox", name="Judge").select_option("ppi-judge")
    section.get_by_role("combobox", name="Study").select_option(str(scenario["study"].pk))
    section.get_by_role("button", name="Correct").click()
    expect(section.locator("#how2score-ppi-table")).to_contain_text("gen-a")
    section.locator("summary", has_text="By topic").click()
    expect(section.locator("details table tbody tr")).to_have_count(4)  # 2 generators × 2 topics
    section.screenshot(path=str(shots / "rankings-ppi.png"))
