"""Plan a study, in chromium: from a label set's page a researcher opens the plan, types the
costs and a target, and reads the plan in one sentence — the same as ``ppi_plan`` prints for the
file — beside people alone; a refused cost comes back at its field with the other fields kept. The page
passes the axe audit."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import PLACEHOLDER, USER_PASSWORD
from tests.validation.label_sets.scenario import csv_text, rows

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_plan_a_study_from_a_label_set(live_server, make_user, page, shots, tmp_path):
    path = tmp_path / "pilot.csv"
    path.write_text(csv_text(rows()))
    out = StringIO()
    call_command("ppi_plan", "--labelled", str(path), "--cost-human", "0.90", "--cost-judge",
                 "0.01", "--half-width", "0.05", "--currency", "GBP", stdout=out)  # fmt: skip
    sentence = out.getvalue().splitlines()[0]

    make_user("rese", role="researcher")
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "rese")
    page.fill("input[name=password]", USER_PASSWORD)
    page.locator("form").get_by_role("button").click()
    page.goto(f"{live_server.url}/judging/compare/label-sets/")
    page.get_by_label("Name").fill("pilot")
    page.get_by_label("Label file (CSV or JSONL)").set_input_files(str(path))
    page.get_by_role("button", name="Upload and compute").click()
    page.get_by_role("link", name="Plan a study from these labels").click()
    expect(page.get_by_role("heading", name="Plan a study from pilot", level=1)).to_be_visible()

    page.get_by_label("Cost of one human label").fill("0")
    page.get_by_label("Cost of one judge verdict").fill("0.01")
    page.get_by_label("Target value").fill("5")
    page.get_by_role("button", name="Plan").click()
    expect(page.locator("#id_cost_human-error")).to_contain_text("greater than or equal to")
    expect(page.get_by_label("Cost of one human label")).to_have_value("0")
    expect(page.get_by_label("Target value")).to_have_value("5")
    assert serious_violations(page) == []

    page.get_by_label("Cost of one human label").fill("0.90")
    page.get_by_role("button", name="Plan").click()
    expect(page.locator("#plan-sentence")).to_have_text(sentence)
    expect(page.locator("#plan-table")).to_contain_text("People alone")
    text = page.locator("body").inner_text()
    assert not PLACEHOLDER.search(text), PLACEHOLDER.search(text)
    assert serious_violations(page) == []
    page.screenshot(path=str(shots / "ppi-plan-page.png"), full_page=True)
