"""A refused autosave tells, in a real browser: an over-long failure description with its step
links on an item that came in place after a submit is refused by the server (422), the reason is
shown at the field, and a reload of the same tab brings back the description and the linked steps from this browser until the server accepts
a draft of them."""

from __future__ import annotations

import re

import pytest

from annotation.labels import MAX_DESCRIPTION
from annotation.models import Draft
from tests.annotation.factories import make_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _to_item(page, base, study):
    page.goto(f"{base}/study/s/{study.slug}/?PROLIFIC_PID=PID-DRAFT&STUDY_ID=S1&SESSION_ID=D1")
    page.get_by_role("button", name=re.compile("I agree")).click()
    page.get_by_role("button", name=re.compile("I understand")).click()
    page.wait_for_selector("#item-form")


def _type_over_long(page, selector: str, text: str) -> None:
    """What a paste past the box's maxlength (or a script) sends: the value set, then input."""
    page.eval_on_selector(
        selector,
        "(el, v) => { el.removeAttribute('maxlength'); el.value = v;"
        " el.dispatchEvent(new Event('input', {bubbles: true})); }",
        text,
    )


def test_an_over_long_description_is_refused_at_the_field_and_survives_a_reload(
    live_server, page, shots
):
    base = live_server.url
    study = make_study(n_items=3, items_per_participant=3)
    _to_item(page, base, study)
    page.wait_for_load_state()
    # the first item answered and submitted: the second comes in place (the script started again)
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        box.click()
    page.get_by_label(re.compile("No critical failures identified")).check()
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("Item 2 of 3").wait_for()
    page.locator("input[name=choice][value=failure]").check()
    page.locator("input[name=f-0-l1][value='1']").check()
    page.locator("input[name=f-0-l2][value='2']").check()
    long_text = "The beans are never soaked. " + "x" * MAX_DESCRIPTION
    _type_over_long(page, "#f-0-desc", long_text)

    error = page.locator("#f-0-desc-error")
    error.wait_for()
    assert (
        f"{MAX_DESCRIPTION:,}" in error.inner_text() or str(MAX_DESCRIPTION) in error.inner_text()
    )
    status = page.locator("#save-status").inner_text()
    assert "Draft not saved" in status and "kept in this browser" in status
    assert not Draft.objects.filter(data__icontains="never soaked").exists()
    page.screenshot(path=str(shots / "draft-over-long-refused.png"), full_page=True)

    # a reload of this very tab: the text and the step links come back from this browser
    page.evaluate("() => { window.onbeforeunload = null; }")
    page.reload()
    page.wait_for_selector("#item-form")
    page.get_by_text("Item 2 of 3").wait_for()
    assert page.locator("input[name=choice][value=failure]").is_checked()
    assert page.locator("#f-0-desc").input_value() == long_text
    assert page.locator("input[name=f-0-l1][value='1']").is_checked()
    assert page.locator("input[name=f-0-l2][value='2']").is_checked()
    # restored and sent again: the server's reason is at the field again, the text still kept
    page.locator("#f-0-desc-error").wait_for()
    assert "Draft not saved" in page.locator("#save-status").inner_text()

    # shortened, the server accepts it: the error and the local copy go, the links are saved
    page.locator("#f-0-desc").fill("The beans are never soaked.")
    page.locator("#save-status").filter(has_text="Draft saved").wait_for()
    assert page.locator("#f-0-desc-error").count() == 0
    kept = page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('h2r-draft:')).length"
    )
    assert kept == 0
    failure = Draft.objects.get().data["failures"][0]
    assert failure["description"] == "The beans are never soaked."
    assert failure["l1_steps"] == [1] and failure["l2_steps"] == [2]
