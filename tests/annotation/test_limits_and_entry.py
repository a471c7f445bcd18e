"""Limits on typed text and entry, through Django's client on PostgreSQL: over-long text is refused with its limit
named, never cut (study descriptions, a participant's comments, drafts); the limits table in the
docs matches the code; a control character on the new-study form is a field error; following a
study link creates no participant (the consent POST does), and a signed-in account is one
participant per study whichever link it follows, listed on its home page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotation import labels
from annotation.form_types import base as form_base
from annotation.form_types import solve
from annotation.models import Annotation, Draft, Participant, Study
from tests.annotation.factories import (
    current,
    item_page_fields,
    make_generations,
    make_study,
    study_page_fields,
    to_items,
    url,
)

pytestmark = pytest.mark.django_db

LIMITS_DOC = Path(settings.BASE_DIR) / "docs" / "reference" / "limits.md"


def test_the_limits_table_names_the_limits_the_code_enforces():
    text = LIMITS_DOC.read_text()
    for constant, value in (
        ("MAX_DESCRIPTION", labels.MAX_DESCRIPTION),
        ("MAX_COMMENTS", labels.MAX_COMMENTS),
        ("MAX_NOTE", labels.MAX_NOTE),
        ("MAX_STUDY_DESCRIPTION", labels.MAX_STUDY_DESCRIPTION),
        ("MAX_EXPLANATION", labels.MAX_EXPLANATION),
        ("MAX_TEXT", form_base.MAX_TEXT),
        ("MAX_ANSWER", solve.MAX_ANSWER),
    ):
        rows = [line for line in text.splitlines() if f".{constant}`" in line]
        assert rows and all(f"| {value:,} |" in row for row in rows), constant
    assert Study._meta.get_field("description").max_length == labels.MAX_STUDY_DESCRIPTION
    assert Annotation._meta.get_field("comments").max_length == labels.MAX_COMMENTS


def test_an_over_long_study_description_is_refused_with_the_limit(client, make_user):
    client.force_login(make_user("r", role="researcher"))
    gens = make_generations(3)
    limit = labels.MAX_STUDY_DESCRIPTION
    page = client.post(
        reverse("annotation:study_create"),
        study_page_fields(gens, 3, description="x" * (limit + 1)),
    )
    html = page.content.decode()
    assert page.status_code == 200 and not Study.objects.exists()
    assert f"Description: {limit + 1:,} characters, over the limit of {limit:,}" in html
    ok = client.post(
        reverse("annotation:study_create"), study_page_fields(gens, 3, description="x" * limit)
    )
    assert ok.status_code == 302 and len(Study.objects.get().description) == limit


def test_a_control_character_on_the_new_study_form_is_a_field_error(client, make_user):
    client.force_login(make_user("r", role="researcher"))
    gens = make_generations(2)
    page = client.post(
        reverse("annotation:study_create"),
        study_page_fields(gens, 2, name="Beans", description="read\x07 this"),
    )
    html = page.content.decode()
    assert page.status_code == 200 and "This request was refused" not in html
    assert "Description: contains a control character (U+0007" in html
    assert 'value="Beans"' in html and not Study.objects.exists()


def test_an_over_long_comment_is_refused_at_draft_and_submit_never_cut(client):
    study = make_study(n_items=2)
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    too_long = "c" * (labels.MAX_COMMENTS + 7)
    r = client.post(url("draft", study, a.pk), item_page_fields(comments=too_long))
    assert r.status_code == 422
    body = r.json()
    assert body["fields"]["comments"].startswith("Comments: 5,007 characters, over the limit")
    assert not Draft.objects.exists()
    r = client.post(url("submit", study, a.pk), item_page_fields(comments=too_long))
    assert not Annotation.objects.exists()
    page = client.get(r.url).content.decode()
    assert "over the limit of 5,000" in page
    # the refusal also rides to its field (static/js/annotate.js shows it under the textarea)
    assert '<script id="field-errors" type="application/json">{"comments": "Comments: 5,007' in page
    # at the limit it is stored and exported whole
    exact = "e" * labels.MAX_COMMENTS
    client.post(url("submit", study, a.pk), item_page_fields(comments=exact))
    assert Annotation.objects.get().comments == exact
    manage = Client()
    manage.force_login(_researcher())
    export = manage.get(reverse("annotation:study_export", args=[study.pk, "jsonl"]))
    row = json.loads(b"".join(export.streaming_content).decode().splitlines()[0])
    assert row["comments"] == exact


def test_parsing_an_answer_cuts_nothing():
    data = {"comments": ["c" * 9_000], "f-0-desc": ["d" * 3_000], "choice": ["failure"]}
    label = labels.parse_label(data, n_l1=2, n_l2=2)
    assert len(label.comments) == 9_000 and len(label.failures[0]["description"]) == 3_000


def _researcher():
    from django.contrib.auth.models import User

    from core.roles import role_assign

    user = User.objects.create_user("export-researcher", password="x")
    role_assign(user=user, role="researcher")
    return user


# --- entry: the consent POST creates the participant; one account, one participant ----------


def test_following_a_study_link_creates_no_participant(client, make_user):
    study = make_study(n_items=2, entry="both")
    prolific = {"PROLIFIC_PID": "CHECKER", "STUDY_ID": "S1", "SESSION_ID": "X"}
    for _ in range(3):  # a link checker following the link again and again
        assert client.get(url("enter", study), prolific).status_code == 302
        assert Client().get(url("enter", study), prolific).status_code == 302
    assert client.get(url("consent", study)).status_code == 200
    assert not Participant.objects.exists()
    r = client.post(url("consent", study), {"consent": "agree"})
    assert r.url == url("training", study)
    assert Participant.objects.get().prolific_pid == "CHECKER"
    # an account's link too
    account = Client()
    account.force_login(make_user("joiner", role="annotator"))
    assert account.get(url("enter", study)).url == url("consent", study)
    assert account.get(url("consent", study)).status_code == 200
    assert Participant.objects.count() == 1


def test_a_signed_in_account_is_one_participant_whichever_link(client, make_user):
    study = make_study(n_items=3, entry="both")
    user = make_user("anna", role="annotator")
    client.force_login(user)
    home = client.get("/").content.decode()
    assert 'id="your-studies"' in home and url("enter", study) in home
    assert "not joined yet" in home
    client.get(url("enter", study))
    client.post(url("consent", study), {"consent": "agree"})
    mine = Participant.objects.get()
    assert mine.user == user
    # a Prolific-style link (what the home page's Join button used to give) and the study link
    other = {"PROLIFIC_PID": "visitor-1a2b", "STUDY_ID": "demo", "SESSION_ID": "s"}
    fresh = Client()
    fresh.force_login(user)
    for c in (client, fresh):
        assert c.get(url("enter", study), other).url == url("training", study)
        assert c.get(url("enter", study)).url == url("training", study)
    assert Participant.objects.count() == 1
    home = client.get("/").content.decode()
    assert "codebook next" in home and "not joined yet" not in home


def test_a_control_character_in_the_next_rounds_name_is_a_field_error(client, make_user):
    study = make_study(n_items=2)
    client.force_login(make_user("r", role="researcher"))
    page = client.post(reverse("annotation:rounds", args=[study.pk]), {"name": "Round\x1b two"})
    html = page.content.decode()
    assert page.status_code == 400 and "This request was refused" not in html
    assert 'id="round-name-error"' in html and "U+001B" in html
    assert 'value="Round' in html and Study.objects.count() == 1
    ok = client.post(reverse("annotation:rounds", args=[study.pk]), {"name": "Round two"})
    assert ok.status_code == 302 and Study.objects.filter(name="Round two").exists()
