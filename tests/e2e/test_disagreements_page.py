"""The disagreement list in chromium: a researcher opens the judge validation page, clicks the
confusion-table cell "people say failure, judge says none" and reads that item side by side,
with the steps the annotators linked marked; then a both-say-failure item with the steps each
side linked."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.validation.disagreements.scenario import disagreement_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_validation_cell_opens_its_items(live_server, make_user, page, shots):
    scenario = disagreement_scenario()
    items = scenario["items"]
    make_user("rese", role="researcher", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next=/judging/compare/validation/")
    page.fill("input[name=username]", "rese")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()
    expect(page.get_by_role("heading", name="Judge validation")).to_be_visible()
    page.select_option("select[name=study]", str(scenario["study"].pk))
    page.select_option("select[name=judge]", "judge-d")
    page.get_by_role("button", name="Show").click()
    summary = page.locator("#disagreements-summary")
    expect(summary).to_contain_text("mean Jaccard 0.667")
    summary.screenshot(path=str(shots / "validation-disagreements-summary.png"))
    summary.get_by_role("link", name="1 item: people say failure, judge says none").click()

    expect(page.get_by_role("heading", name="Disagreements, item by item")).to_be_visible()
    expect(page.locator("#disagreements-count")).to_contain_text("1 item")
    card = page.locator(f"#item-{items[1].pk}")
    expect(card).to_be_visible()
    expect(page.locator(".disagreement-item")).to_have_count(1)
    expect(card).to_contain_text("people say failure, judge says none")
    expect(card.locator(".annotator-card")).to_have_count(3)
    expect(card.locator(".annotator-card").first).to_contain_text("P0")
    marked = card.locator("ol.l2 li.linked-people")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text(items[1].generation.predicted_steps[1])
    expect(card.locator("ol.l2 li.linked-judge")).to_have_count(0)
    page.screenshot(path=str(shots / "disagreements-cell.png"), full_page=True)

    # the filter form, by keyboard-reachable controls: both-say-failure items, by overlap
    page.locator("input[name=kind][value=people_failure]").uncheck()
    page.locator("input[name=kind][value=both_failure]").check()
    page.select_option("select[name=sort]", "-overlap")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".disagreement-item")).to_have_count(3)
    first = page.locator(".disagreement-item").first
    expect(first).to_have_attribute("id", f"item-{items[7].pk}")
    expect(first).to_contain_text("step overlap 1.00")
    item0 = page.locator(f"#item-{items[0].pk}")
    expect(item0.locator("ol.l2 li.linked-judge.linked-people")).to_have_count(1)
    expect(item0.locator("ol.l2 li.linked-judge")).to_have_count(2)
    expect(item0.locator("ol.l2 li.linked-people")).to_have_count(2)
    expect(item0.locator(".judge-card")).to_contain_text(
        f"Judge reasoning on {items[0].generation_id}."
    )
    page.screenshot(path=str(shots / "disagreements-overlap.png"), full_page=True)
