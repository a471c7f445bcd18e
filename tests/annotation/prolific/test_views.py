"""The Prolific page through HTTP: researchers read, admins act after a confirmation step."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from annotation.models import ProlificCall

pytestmark = pytest.mark.django_db
REASON = "Both attention checks were failed and the labels contradict the codebook throughout. " * 2


def url(study, name="prolific"):
    return reverse(f"annotation:{name}", args=[study.pk])


def text(response) -> str:
    return html.unescape(response.content.decode())


def test_researcher_sees_matched_submissions_and_the_log_but_cannot_act(
    paid_study, client, researcher
):
    client.force_login(researcher)
    page = text(client.get(url(paid_study) + "?load=1"))
    assert 'data-pid="P_X"' in page and "never entered" in page
    assert 'name="submission"' not in page  # no action forms for researchers
    assert "pay-researcher" in page and "List submissions" in page  # the logged call
    for name in ("prolific_submissions", "prolific_bonuses", "prolific_exclude"):
        assert client.post(url(paid_study, name), {"confirm": "1"}).status_code == 403, name
    assert not ProlificCall.objects.exclude(action="list").exists()


def test_a_page_view_does_not_call_prolific_listing_is_a_button(paid_study, client, researcher):
    client.force_login(researcher)
    for _ in range(3):
        page = text(client.get(url(paid_study)))
        assert 'id="list-submissions"' in page and 'data-pid="P_A"' not in page
    assert not ProlificCall.objects.exists()
    page = text(client.get(url(paid_study) + "?load=1"))  # the button
    assert 'data-pid="P_A"' in page and "List submissions again" in page
    assert ProlificCall.objects.filter(action="list").count() == 1


def test_annotators_are_kept_out(paid_study, client, make_user):
    client.force_login(make_user("pp-annotator", role="annotator"))
    assert client.get(url(paid_study)).status_code == 403


def test_reject_needs_confirmation_then_happens(paid_study, prolific_server, client, admin):
    client.force_login(admin)
    sub = paid_study.subs["P_C"]
    form = {
        "action": "reject",
        "submission": [sub],
        "rejection_category": "FAILED_CHECK",
        "message": REASON,
    }
    confirm = client.post(url(paid_study, "prolific_submissions"), form)
    assert confirm.status_code == 200 and "Confirm: reject 1 submission" in text(confirm)
    assert prolific_server.submissions[sub]["status"] == "AWAITING REVIEW"  # nothing yet
    done = client.post(
        url(paid_study, "prolific_submissions"), {**form, "confirm": "1"}, follow=True
    )
    assert "Reject: 1 done." in text(done)
    assert prolific_server.submissions[sub]["status"] == "REJECTED"
    assert ProlificCall.objects.filter(action="reject", user=admin, ok=True).count() == 1


def test_a_short_rejection_message_is_refused_with_a_message(
    paid_study, prolific_server, client, admin
):
    client.force_login(admin)
    form = {
        "action": "reject",
        "submission": [paid_study.subs["P_C"]],
        "rejection_category": "OTHER",
        "message": "no",
    }
    r = client.post(url(paid_study, "prolific_submissions"), {**form, "confirm": "1"}, follow=True)
    assert "at least 100 characters (2 given)" in text(r)
    assert prolific_server.calls("POST") == []


def test_bonus_preview_shows_the_total_then_pays(paid_study, prolific_server, client, admin):
    client.force_login(admin)
    preview = client.post(url(paid_study, "prolific_bonuses"), {"bonuses": "P_A,1.10\nP_B,2.15"})
    page = text(preview)
    assert 'id="bonus-total">3.25<' in page and not prolific_server.calls("POST")
    digest = page.split('name="digest" value="')[1].split('"')[0]
    done = client.post(
        url(paid_study, "prolific_bonuses"),
        {"bonuses": "P_A,1.10\nP_B,2.15", "confirm": "1", "digest": digest},
        follow=True,
    )
    assert "Bonuses paid: 2 participants, total 3.25" in text(done)
    (bulk,) = prolific_server.bulk.values()
    assert bulk["paid"] == 1


def test_exclude_a_rejected_participant(paid_study, prolific_server, client, admin):
    prolific_server.groups["EXCL"] = []
    client.force_login(admin)
    confirm = client.post(
        url(paid_study, "prolific_exclude"), {"participants": "P_C", "group_id": "EXCL"}
    )
    assert "Add 1 participant to group" in text(confirm)
    r = client.post(
        url(paid_study, "prolific_exclude"),
        {"participant": "P_C", "group_id": "EXCL", "confirm": "1"},
        follow=True,
    )
    assert "1 participant added to group EXCL." in text(r)
    assert prolific_server.groups["EXCL"] == ["P_C"]


def test_prolific_down_is_a_clear_message_not_a_500(
    paid_study, prolific_server, client, researcher
):
    prolific_server.fail_next("/submissions/", 503)
    client.force_login(researcher)
    r = client.get(url(paid_study) + "?load=1")
    assert r.status_code == 200
    assert "Could not list submissions: Prolific refused GET" in text(r) and "HTTP 503" in text(r)
    assert ProlificCall.objects.get().ok is False


def test_progress_page_links_here(paid_study, client, researcher):
    client.force_login(researcher)
    page = text(client.get(paid_study.get_absolute_url()))
    for name in ("prolific", "pay", "quality"):
        assert url(paid_study, name) in page


def test_a_control_character_in_the_message_is_an_error_at_the_field(
    paid_study, prolific_server, client, admin
):
    """The message box speaks through the text gate (not the door's bare 400 page);
    what was typed stays, the submissions are listed again, nothing is sent."""
    client.force_login(admin)
    sub = paid_study.subs["P_C"]
    form = {"action": "reject", "submission": [sub], "message": "Failed\x00 " + REASON}
    refused = client.post(url(paid_study, "prolific_submissions"), form)
    page = text(refused)
    assert refused.status_code == 400 and "This request was refused" not in page
    assert 'id="submissions-message-error">Message: contains a control character (U+0000' in page
    assert "Both attention checks were failed" in page and 'data-pid="P_C"' in page
    assert prolific_server.submissions[sub]["status"] == "AWAITING REVIEW"
