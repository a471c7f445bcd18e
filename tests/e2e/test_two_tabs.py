"""Two tabs in a real browser: the same item open in two tabs; the first tab submits, the
second tab's different answer is not silently dropped: it lands on a page showing the first
answer (kept) and what it had typed, with a clear message. Also: a refused submit (text with a
control character) redirects, so a reload is a plain GET showing the item, never a 405."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation
from tests.annotation.factories import make_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def read_everything(page):
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        box.click()


def test_two_tabs_on_one_item(live_server, page, shots):
    study = make_study(n_items=3, items_per_participant=3)
    entry = f"{live_server.url}/study/s/{study.slug}/?PROLIFIC_PID=tabs1&STUDY_ID=S1&SESSION_ID=s1"
    page.goto(entry)
    page.get_by_role("button", name="I agree, start the study").click()
    page.get_by_role("button", name=re.compile("start the study")).click()
    page.get_by_text("Item 1 of 3").wait_for()
    item_url = page.url

    second = page.context.new_page()  # the same participant, a second tab on the same item
    second.goto(item_url)
    second.get_by_text("Item 1 of 3").wait_for()

    read_everything(page)
    page.get_by_label(re.compile("No critical failures identified")).check()
    page.locator("#comments").fill("First tab: fine.")
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=10_000)  # no eval: CSP
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("Item 2 of 3").wait_for()

    read_everything(second)
    second.locator("input[name=choice][value=failure]").check()
    second.locator("#f-0-desc").fill("Second tab thinks step 2 is wrong.")
    second.locator(".failure").first.get_by_text("L1.1").click()
    second.locator(".failure").first.get_by_text("L2.2").click()
    second.locator("#comments").fill("Second tab's comment.")
    expect(second.locator("#submit-btn")).to_be_enabled(timeout=10_000)
    second.get_by_role("button", name="Submit & Continue").click()
    second.get_by_text("This item was already submitted").wait_for()
    assert "Comments: First tab: fine." in second.locator("#first-answer").inner_text()
    assert second.locator("#typed-comments").input_value() == "Second tab's comment."
    typed_failure = second.locator("#typed-answer textarea").first.input_value()
    assert typed_failure == "Second tab thinks step 2 is wrong."
    # the step links it typed are kept in the summary too, L1 as well as L2
    links = second.locator("#typed-answer .typed-links").first.inner_text()
    assert links == "Failure 1 links: L1 steps 1; L2 steps 2"
    second.screenshot(path=str(shots / "item-two-tabs.png"), full_page=True)
    stored = Annotation.objects.get()
    assert stored.has_failure is False and stored.comments == "First tab: fine."
    second.get_by_role("link", name="Continue with the next item").click()
    second.get_by_text("Item 2 of 3").wait_for()  # the same next item as the first tab

    # a refused submit (a control character typed or pasted) redirects: reload is a GET
    read_everything(page)
    page.get_by_label(re.compile("No critical failures identified")).check()
    page.evaluate("document.getElementById('comments').value = 'bell\\u0007 here'")
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=10_000)  # no eval: CSP
    page.get_by_role("button", name="Submit & Continue").click()
    page.locator("#submit-errors").wait_for()
    assert (
        "Comments: contains a control character (U+0007"
        in page.locator("#submit-errors").inner_text()
    )
    assert page.locator("#comments").input_value() == "bell here"
    response = page.reload()
    assert response.status == 200 and page.url.endswith("/item/")
    page.get_by_text("Item 2 of 3").wait_for()
    assert Annotation.objects.count() == 1
