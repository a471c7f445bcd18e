"""A paid study from creation to payment without Prolific's site, in a real browser against
the local Prolific server, with signed webhooks applied by a real Celery worker:

subscribe to webhooks → create the Prolific study (prefilled) → publish a pilot of one place
→ the pilot participant labels → the app proposes time and reward → confirm and add a place →
a participant takes the last free item and returns it on Prolific → the item goes to the next
participant (measured: seconds from Prolific's RETURNED to the item freed and to the next
participant's item page) → approve both submissions. Nothing is ever assigned twice."""

from __future__ import annotations

import json
import re
import time

import pytest
from django.core.cache import cache
from django.db.models import Count, Q
from playwright.sync_api import expect

from annotation.models import (
    Annotation,
    Assignment,
    Participant,
    ProlificCall,
    ProlificDelivery,
    ProlificStudy,
    ProlificSubmission,
    StudyItem,
    StudyPay,
)
from tests.annotation.factories import make_study
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
PUBLIC = "https://h2r.example/study/prolific/hook/"
SECRET_KEYS = ["annotation:prolific:webhook-secret", "annotation:prolific:webhook-secret:read"]
PASSWORD = "pw-Test-12345"


def answer_none(page):
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        box.click()
    page.get_by_label(re.compile("No critical failures identified")).check()
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=10_000)
    page.get_by_role("button", name="Submit & Continue").click()


def participant_page(browser, live_server, study, pid, session):
    """A participant's own browser, at the item page after consent and the codebook."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body="<h1>Prolific</h1>", content_type="text/html"),
    )
    prolific_id = study.prolific_study_id
    page.goto(
        f"{live_server.url}/study/s/{study.slug}/"
        f"?PROLIFIC_PID={pid}&STUDY_ID={prolific_id}&SESSION_ID={session}"
    )
    page.get_by_role("button", name="I agree, start the study").click()
    page.get_by_role("button", name=re.compile("start the study")).click()
    page.get_by_text("Item 1 of 1").wait_for()
    return page


def held_item(pid: str) -> int:
    return Assignment.objects.get(participant__prolific_pid=pid, state="active").item_id


def test_from_creation_to_payment_with_a_returned_place_reassigned(
    live_server, page, browser, shots, make_user, prolific_server, settings, tmp_path
):
    settings.PROLIFIC_WEBHOOK_URL = PUBLIC
    settings.PROLIFIC_WORKSPACE_ID = "WS1"
    cache.delete_many(SECRET_KEYS)
    prolific_server.routes[PUBLIC] = f"{live_server.url}/study/prolific/hook/"
    study = make_study(
        n_items=2, overlap=1, items_per_participant=1, attention_rate=0, min_seconds_per_item=0
    )
    StudyPay.objects.create(study=study, reward="1.00", estimated_minutes=2)
    make_user("life-admin", role="admin", password=PASSWORD)

    with running_worker(tmp_path, concurrency=1):
        # 1. webhooks, then the Prolific study, created from the app
        page.goto(f"{live_server.url}/accounts/login/?next=/study/manage/{study.pk}/")
        page.fill("input[name=username]", "life-admin")
        page.fill("input[name=password]", PASSWORD)
        page.locator("form").get_by_role("button").click()
        page.locator("#prolific-link").click()
        page.locator("#prolific-study-link").click()
        page.locator("#hooks-link").click()
        page.locator("#subscribe").click()
        page.get_by_text("Subscribed: submission.status.change, study.status.change.").wait_for()
        assert all(s["is_enabled"] for s in prolific_server.subscriptions.values())
        page.go_back()
        page.go_back()
        page.reload()
        assert page.locator("#create-places").input_value() == "2"  # 2 items x k=1 / 1 each
        assert page.locator("#create-reward").input_value() == "1.00"
        page.locator("#create-prolific").click()
        page.get_by_text("created as a draft").wait_for()
        study.refresh_from_db()
        remote = prolific_server.studies[study.prolific_study_id]
        assert (
            remote["status"] == "UNPUBLISHED" and "{{%SESSION_ID%}}" in remote["external_study_url"]
        )

        # 2. a pilot of one place
        page.fill("#pilot-places", "1")
        page.locator("#publish-next").click()
        page.get_by_text("Confirm: Publish 1 place (pilot)").wait_for()
        page.locator("#confirm").click()
        page.get_by_text("Published on Prolific: a pilot of 1.").wait_for()
        assert (remote["status"], remote["total_available_places"]) == ("ACTIVE", 1)

        sub1 = prolific_server.take_place(study.prolific_study_id, "P1")
        p1 = participant_page(browser, live_server, study, "P1", sub1)
        item_a = held_item("P1")
        p1.wait_for_timeout(1200)  # some active time on the item
        answer_none(p1)
        p1.get_by_text("All done").wait_for()
        prolific_server.set_status(sub1, "AWAITING REVIEW")  # the pilot's place is full
        wait_for(
            lambda: ProlificStudy.objects.get(study=study).status == "AWAITING REVIEW",
            timeout=20,
            message="the study status webhook",
        )

        # 3. the app proposes time and reward; the admin confirms and adds a place
        page.reload()
        expect(page.locator("#pilot-proposal")).to_contain_text("the app proposes")
        assert page.locator("#pilot-minutes").input_value() == "1"
        page.fill("#pilot-add", "1")
        page.locator("#pilot-next").click()
        page.get_by_text("more places").wait_for()
        page.locator("#confirm").click()
        page.get_by_text("Pilot confirmed").wait_for()
        assert remote["total_available_places"] == 2 and remote["status"] == "ACTIVE"

        # 4. P2 takes the last free item, then returns the study on Prolific
        sub2 = prolific_server.take_place(study.prolific_study_id, "P2")
        p2 = participant_page(browser, live_server, study, "P2", sub2)
        item_b = held_item("P2")
        assert item_b != item_a
        started = time.monotonic()
        prolific_server.set_status(sub2, "RETURNED")
        answered = time.monotonic() - started
        (returned,) = [d for d in prolific_server.deliveries if b'"RETURNED"' in d.body]
        assert returned.answer == 202, returned.answer_text
        wait_for(
            lambda: StudyItem.objects.get(pk=item_b).n_assigned == 0,
            timeout=30,
            interval=0.02,
            message="the returned item freed",
        )
        freed = time.monotonic() - started
        sub3 = prolific_server.take_place(study.prolific_study_id, "P3")
        p3 = participant_page(browser, live_server, study, "P3", sub3)
        reassigned = time.monotonic() - started
        assert held_item("P3") == item_b
        p2.reload()
        p2.get_by_text("Your place in this study has ended").wait_for()
        answer_none(p3)
        p3.get_by_text("All done").wait_for()
        prolific_server.set_status(sub3, "AWAITING REVIEW")

        # 5. approve both submissions from the app
        page.goto(f"{live_server.url}/study/manage/{study.pk}/prolific/")
        page.locator("#list-submissions").click()
        page.get_by_label("choose P1").check()
        page.get_by_label("choose P3").check()
        page.locator("#submissions-next").click()
        page.locator("#confirm").click()
        page.get_by_text("Approve: 2 done.").wait_for()
        wait_for(
            lambda: (
                set(ProlificSubmission.objects.values_list("prolific_pid", "status"))
                == {("P1", "APPROVED"), ("P2", "RETURNED"), ("P3", "APPROVED")}
            ),
            timeout=20,
            message="the approvals' webhooks",
        )
        page.goto(f"{live_server.url}/study/manage/{study.pk}/prolific/study/")
        page.screenshot(path=str(shots / "prolific-study-life.png"), full_page=True)
        for extra in (p1, p2, p3):
            extra.context.close()

    # nothing assigned twice: at most k live assignments and k labels per item, ever
    live = StudyItem.objects.filter(study=study).annotate(
        live=Count("assignments", filter=~Q(assignments__state="expired"))
    )
    assert all(i.live <= study.overlap for i in live)
    assert list(
        Annotation.objects.values_list("item_id", "participant__prolific_pid").order_by("item_id")
    ) == sorted([(item_a, "P1"), (item_b, "P3")])
    assert Participant.objects.get(prolific_pid="P2").stage == "returned"
    assert not ProlificDelivery.objects.filter(accepted=False).exists()
    assert {"study_create", "study_publish", "study_update", "approve"} <= set(
        ProlificCall.objects.values_list("action", flat=True)
    )
    figures = {
        "webhook_answered_s": round(answered, 3),
        "item_freed_s": round(freed, 3),
        "next_participant_on_item_s": round(reassigned, 3),
    }
    (shots.parent / "prolific-returned-place.json").write_text(json.dumps(figures, indent=1))
    print("returned place:", figures)
    assert freed < 5.0, figures
