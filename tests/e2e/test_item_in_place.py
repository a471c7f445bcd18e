"""The next item in place, in a real browser: the item form is boosted
(htmx), so a submit is one request answered with the next item's page, swapped into the body
without a page load; the page's script starts again for the new item (its timers and listeners
of the item before stopped), focus goes to the new item, the address stays the item page's, and
the back button or a reload shows the current item. A submit that cannot reach the server keeps
the answers and can be sent again; a page the server refuses with an error status is shown."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation, Study
from tests.annotation.factories import make_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def enter(page, base, study, pid):
    page.goto(f"{base}/study/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=s1")
    page.get_by_role("button", name="I agree, start the study").click()
    page.get_by_role("button", name=re.compile("start the study")).click()
    page.wait_for_selector("#item-form")
    page.wait_for_load_state()  # the deferred scripts set up before the first click


def answer_none(page, comment: str):
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        box.click()
    page.get_by_label(re.compile("No critical failures identified")).check()
    page.locator("#comments").fill(comment)
    expect(page.locator("#submit-btn")).to_be_enabled()


def test_the_next_item_comes_in_place_with_its_script_started_again(
    live_server, page, settings, shots
):
    settings.ANNOTATION_HEARTBEAT_SECONDS = 1
    study = make_study(n_items=3, items_per_participant=3)
    enter(page, live_server.url, study, "inplace1")
    page.get_by_text("Item 1 of 3").wait_for()
    first_beat = page.locator("#item-form").get_attribute("data-beat-url")
    requests: list[tuple[str, str]] = []
    page.on("request", lambda r: requests.append((r.method, r.url)))
    page.evaluate("window.samePage = 'yes'")  # gone if the browser loads a page

    answer_none(page, "First item: fine.")
    requests.clear()
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("Item 2 of 3").wait_for()

    assert page.evaluate("window.samePage") == "yes", "the next item came by a page load"
    assert page.url.endswith(f"/study/s/{study.slug}/item/")
    sent = [(m, u) for m, u in requests if "/beat/" not in u and "/draft/" not in u]
    assert [m for m, _ in sent] == ["POST"] and sent[0][1].endswith("/submit/"), sent
    assert page.evaluate("document.activeElement.id") == "main"  # read the new item from the top
    assert Annotation.objects.get().comments == "First item: fine."
    expect(page.locator("#comments")).to_have_value("")  # the new item's form, empty
    assert page.title().startswith("Test study")

    # the new item's script runs, once: its reading count, its heartbeat only (the first item's
    # timer stopped), the keyboard's picks adding one failure
    beat = page.locator("#item-form").get_attribute("data-beat-url")
    assert beat != first_beat
    page.locator(".step").first.click()
    assert page.locator("#read-count").inner_text().startswith("1/")
    requests.clear()
    page.wait_for_timeout(2_600)
    beats = [u for m, u in requests if "/beat/" in u]
    assert beats and all(u.endswith(beat) for u in beats), beats
    assert len(beats) <= 3, beats  # one timer a second, not one per item seen
    page.locator("body").press("f")
    expect(page.locator("input[name=choice][value=failure]")).to_be_checked()
    assert page.locator(".failure").count() == 1
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        if not box.locator("input").is_checked():
            box.click()
    page.locator("#f-0-desc").fill("Step 2 contradicts the goal.")
    page.locator(".failure").first.get_by_text("L2.2").click()
    expect(page.locator("#submit-btn")).to_be_enabled()
    page.locator("#f-0-desc").press("Control+Enter")  # the keyboard's submit, in place too
    page.get_by_text("Item 3 of 3").wait_for()
    assert page.evaluate("window.samePage") == "yes"
    page.screenshot(path=str(shots / "item-in-place.png"), full_page=False)

    # back: the item page is one history entry however many items were seen, and never comes
    # from a cache, so the page before it sends a working participant to the current item, asked
    # again (no earlier item's form; no annotator page in htmx's history cache either)
    page.go_back()
    page.get_by_text("Item 3 of 3").wait_for()
    assert page.evaluate("sessionStorage.getItem('htmx-history-cache')") is None
    page.wait_for_load_state()
    answer_none(page, "Third item: fine.")
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("All done").wait_for()  # another page of the flow: loaded as a page
    stored = list(Annotation.objects.order_by("submitted_at"))
    assert [a.has_failure for a in stored] == [False, True, False]
    assert stored[1].failures[0]["l2_steps"] == [2]
    assert all(0 < a.active_ms <= a.wall_ms for a in stored)


def test_a_submit_that_cannot_reach_the_server_keeps_the_answers(live_server, page):
    study = make_study(n_items=2, items_per_participant=2)
    enter(page, live_server.url, study, "inplace2")
    answer_none(page, "Kept while offline.")
    page.route("**/submit/", lambda route: route.abort())
    page.get_by_role("button", name="Submit & Continue").click()
    status = page.locator("#save-status")
    expect(status).to_contain_text("Not submitted: the server could not be reached")
    expect(page.locator("#submit-btn")).to_be_enabled()
    expect(page.locator("#submit-btn")).to_have_text("Submit & Continue")
    expect(page.locator("#comments")).to_have_value("Kept while offline.")
    assert not Annotation.objects.exists()

    page.unroute("**/submit/")
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("Item 2 of 2").wait_for()
    assert Annotation.objects.get().comments == "Kept while offline."


def test_a_page_refused_with_an_error_status_is_shown_in_place(live_server, page):
    study = make_study(n_items=3, items_per_participant=3)
    enter(page, live_server.url, study, "inplace3")
    answer_none(page, "Saved before the close.")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("This study is not accepting work right now").wait_for()
    assert page.url.endswith("/item/")
    assert Annotation.objects.get().comments == "Saved before the close."
    response = page.reload()  # the address is the item page's: a reload says the same
    assert response.status == 410


def test_a_refusal_without_the_item_page_keeps_the_address(live_server, page):
    """A lost session (403) is shown in place and the address stays the item page's, never the
    submit's (a reload there would be a GET of a POST-only address)."""
    study = make_study(n_items=2, items_per_participant=2)
    enter(page, live_server.url, study, "inplace4")
    answer_none(page, "Typed before the cookie went.")
    page.context.clear_cookies(name=f"h2r_p_{study.slug}")  # the participant's signed cookie
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_role("heading", name="We could not find your session").wait_for()
    assert page.url.endswith(f"/study/s/{study.slug}/item/")
    assert not Annotation.objects.exists()
