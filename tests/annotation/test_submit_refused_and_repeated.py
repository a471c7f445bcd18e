"""Refused and repeated submits on the annotator form: the text gate on every free-text field (comments, each
failure's description) for submits and drafts, one transaction per submit (a refused submit
writes no row), redirect after a refused submit (a reload is a GET, never a 405), and the
second submit of an item already submitted (two tabs) showing the first answer and the typed
text. Django's client against PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from annotation.models import Annotation, Assignment, AttentionCheckResult, Draft
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db

BAD = ["\x00", "\x07", "\x1b", "\x7f", "\x85"]


def url(name, study, *args):
    return reverse(f"annotation:{name}", args=[study.slug, *args])


def to_item(client, study, pid="PID1"):
    client.get(url("enter", study), {"PROLIFIC_PID": pid, "STUDY_ID": "S1", "SESSION_ID": "X1"})
    client.post(url("consent", study), {"consent": "agree"})
    client.post(url("training", study))
    assert client.get(url("item", study)).status_code == 200
    a = Assignment.objects.get(participant__prolific_pid=pid, state="active")
    Assignment.objects.filter(pk=a.pk).update(served_at=a.served_at - timedelta(minutes=5))
    return a


def answer(**extra):
    data = {
        "goal_ack": "1",
        "read": ["1", "2", "3", "4"],
        "read_l1": ["1", "2", "3", "4"],
        "choice": "failure",
        "f-0-desc": "Step 2 burns the food.",
        "f-0-l2": ["2"],
        "f-1-desc": "Step 3 floods the kitchen.",
        "f-1-l2": ["3"],
        "comments": "ok",
    }
    data.update(extra)
    return data


def snapshot(a):
    a.refresh_from_db()
    return (
        Annotation.objects.count(),
        AttentionCheckResult.objects.count(),
        Draft.objects.count(),
        a.state,
        a.submitted_at,
    )


@pytest.mark.parametrize(
    "field,name",
    [
        ("comments", "Comments"),
        ("f-0-desc", "Failure 1 description"),
        ("f-1-desc", "Failure 2 description"),
    ],
)
@pytest.mark.parametrize("char", BAD)
def test_control_character_in_each_free_text_field_is_refused(client, field, name, char):
    study = make_study(n_items=2)
    a = to_item(client, study)
    before = snapshot(a)
    typed = f"first part{char}second part"
    r = client.post(url("submit", study, a.pk), answer(**{field: typed}))
    assert r.status_code == 302 and r.url == url("item", study)  # redirect, not a page on POST
    assert snapshot(a) == before  # nothing written: no annotation, no check row, no draft
    r = client.get(r.url)  # the reload after a refusal is a plain GET
    page = r.content.decode()
    assert r.status_code == 200
    assert f"{name}: contains a control character (U+{ord(char):04X}" in page
    assert "first partsecond part" in page  # the typed text is kept, the character taken out
    # once the text is clean the same item submits
    r = client.post(url("submit", study, a.pk), answer())
    assert r.status_code == 302 and Annotation.objects.filter(assignment=a).count() == 1


def test_tab_newline_and_carriage_return_are_fine(client):
    study = make_study(n_items=2)
    a = to_item(client, study)
    r = client.post(url("submit", study, a.pk), answer(comments="a\tb\r\nc"))
    assert r.status_code == 302
    assert Annotation.objects.get(assignment=a).comments == "a\tb\r\nc"


@pytest.mark.parametrize("field", ["comments", "f-0-desc"])
def test_draft_with_nul_is_refused_naming_the_field(client, field):
    study = make_study(n_items=2)
    a = to_item(client, study)
    r = client.post(url("draft", study, a.pk), answer(**{field: "x\x00y"}))
    assert r.status_code == 422
    assert "Draft not saved" in r.content.decode() and "U+0000 NUL" in r.content.decode()
    assert not Draft.objects.exists()


def test_too_early_refusal_writes_no_row_and_reload_is_not_405(client):
    study = make_study(n_items=2, min_seconds_per_item=90)
    to_item(client, study)
    a = Assignment.objects.get()
    Assignment.objects.filter(pk=a.pk).update(served_at=a.served_at + timedelta(minutes=5))
    label = answer(read=["1"], goal_ack="")  # early and incomplete
    r = client.post(url("submit", study, a.pk), label)
    assert r.status_code == 302
    assert not AttentionCheckResult.objects.exists() and not Draft.objects.exists()
    assert not Annotation.objects.exists()
    item_url = r.url
    r = client.get(item_url)
    assert r.status_code == 200 and "at least 90 s" in r.content.decode()
    assert client.get(item_url).status_code == 200  # and again: reloads stay plain GETs


def test_second_submit_of_a_submitted_item_shows_the_first_answer(client):
    study = make_study(n_items=3)
    a = to_item(client, study)
    assert client.post(url("submit", study, a.pk), answer(comments="first tab")).status_code == 302
    # the second tab still has the old item open and submits a different answer
    r = client.post(url("submit", study, a.pk), answer(choice="none", comments="second tab's note"))
    assert r.status_code == 302 and r.url == url("submitted", study, a.pk)
    page = client.get(r.url).content.decode()
    assert "already submitted this item" in page
    assert "Comments: first tab" in page and "Step 2 burns the food." in page
    assert "second tab&#x27;s note" in page  # the typed text, to copy
    stored = Annotation.objects.get(assignment=a)
    assert stored.comments == "first tab" and stored.has_failure is True
    assert Annotation.objects.count() == 1
