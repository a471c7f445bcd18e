"""The annotator flow and researcher pages through Django's test client (real sessions, CSRF off
only where the client cannot carry a token)."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Annotation, Assignment, Participant
from tests.annotation.factories import current, enter, item_page_fields, make_study, to_items, url

pytestmark = pytest.mark.django_db


def age(assignment, seconds=120):
    Assignment.objects.filter(pk=assignment.pk).update(
        served_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_full_prolific_session_with_completion_redirect(client):
    study = make_study(
        n_items=2,
        items_per_participant=2,
        min_seconds_per_item=90,
        n_training=1,
        prolific_study_id="S1",
    )
    r = enter(client, study)
    r = client.get(r.url)
    assert b"I agree" in r.content
    client.post(url("consent", study), {"consent": "agree"})
    r = client.get(url("training", study))
    assert b"What counts as a critical failure" in r.content and b"Worked examples" in r.content
    r = client.post(url("training", study))
    assert r.url == url("item", study)
    page = client.get(url("item", study)).content.decode()
    for text in (
        "I've read the goal",
        "L1 <span>(a valid reference solution)",
        "L2 <span>(solution to evaluate)",
        "No critical failures identified",
        "Critical failures identified",
        "Comments",
        "Submit &amp; Continue",
        "Aim to spend 1–2 minutes",
    ):
        assert text in page, text
    a = current()
    r = client.post(url("submit", study, a.pk), item_page_fields(), follow=True)
    assert r.redirect_chain == [(url("item", study), 302)]  # refused: back to the item page
    assert (
        r.status_code == 200 and "at least 90 s" in r.content.decode()
    )  # early: refused by the server
    age(a)
    r = client.post(
        url("submit", study, a.pk),
        item_page_fields(
            choice="failure",
            **{
                "f-0-desc": "Wrong temperature",
                "f-0-l1": ["2"],
                "f-0-l2": ["3"],
                "f-1-desc": "Missing rinse",
                "f-1-l2": ["4"],
            },
        ),
    )
    assert r.status_code == 302
    assert r.url == url("item", study)
    ann = Annotation.objects.get()
    assert ann.has_failure and ann.failures == [
        {"description": "Wrong temperature", "l1_steps": [2], "l2_steps": [3]},
        {"description": "Missing rinse", "l1_steps": [], "l2_steps": [4]},
    ]
    client.get(url("item", study))
    a2 = current()
    age(a2)
    r = client.post(url("submit", study, a2.pk), item_page_fields())
    r = client.get(r.url)
    assert r.status_code == 302 and r.url == url("done", study)
    r = client.get(r.url)
    html = r.content.decode()
    assert study.completion_code in html
    assert f"https://app.prolific.com/submissions/complete?cc={study.completion_code}" in html


def test_resume_on_another_device_lands_on_the_same_item_with_the_draft(client, django_user_model):
    from django.test import Client

    study = make_study()
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    r = client.post(url("draft", study, a.pk), item_page_fields(n=2, comments="half-way thoughts"))
    assert r.status_code == 200 and "Draft saved" in r.content.decode()
    other = Client()
    r = enter(other, study)
    assert r.url == url("item", study)
    page = other.get(r.url).content.decode()
    assert "half-way thoughts" in page and current().pk == a.pk
    # 2 L1 + 2 L2 steps read of 4 + 4 (the study asks for the L1 click-through by default)
    assert page.count("is-read") >= 4 and "<strong>4/8</strong>" in page


def test_double_submit_is_idempotent(client):
    study = make_study()
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    age(a)
    r1 = client.post(url("submit", study, a.pk), item_page_fields())
    r2 = client.post(
        url("submit", study, a.pk),
        item_page_fields(choice="failure", **{"f-0-desc": "x", "f-0-l2": "1"}),
    )
    assert r1.status_code == r2.status_code == 302
    assert Annotation.objects.count() == 1 and Annotation.objects.get().has_failure is False


def test_incomplete_submission_lists_each_problem(client):
    study = make_study()
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    age(a)
    r = client.post(
        url("submit", study, a.pk),
        {"read": ["1"], "choice": "failure", "f-0-desc": ""},
        follow=True,
    )
    html = r.content.decode()
    assert r.status_code == 200 and r.redirect_chain == [(url("item", study), 302)]
    assert (
        "Goal: tick" in html
        and "3 left" in html
        and "Failure 1: write a short description." in html
    )
    assert Annotation.objects.count() == 0


@pytest.mark.parametrize(
    "params,status,needle",
    [
        ({}, 400, "PROLIFIC_PID is missing"),
        (
            {"PROLIFIC_PID": "x y", "STUDY_ID": "S", "SESSION_ID": "s"},
            400,
            "PROLIFIC_PID is malformed",
        ),
    ],
)
def test_bad_links_get_clear_pages(client, params, status, needle):
    study = make_study()
    r = client.get(url("enter", study), params)
    assert r.status_code == status and needle in r.content.decode()


def test_unknown_study_closed_and_full_pages(client):
    r = client.get(reverse("annotation:enter", args=["nope"]), {"PROLIFIC_PID": "A"})
    assert r.status_code == 400 and "no study has this address" in r.content.decode()
    study = make_study(status="closed")
    r = enter(client, study)
    assert r.status_code == 410 and "closed" in r.content.decode()
    study = make_study(n_items=1, overlap=1)
    to_items(client, study, "FIRST")
    client.get(url("item", study))
    from django.test import Client

    r = enter(Client(), study, "SECOND")
    assert r.status_code == 409 and "This study is full" in r.content.decode()


def test_no_session_and_other_participants_assignments_are_refused(client):
    from django.test import Client

    study = make_study(overlap=2)
    r = client.get(url("item", study))
    assert r.status_code == 403 and "open the study again" in r.content.decode()
    to_items(client, study, "A")
    client.get(url("item", study))
    a = current("A")
    client.post(url("draft", study, a.pk), item_page_fields(comments="SECRET-COMMENT-OF-A"))
    b = Client()
    to_items(b, study, "B")
    page_b = b.get(url("item", study)).content.decode()
    assert "SECRET-COMMENT-OF-A" not in page_b
    # B cannot read, save or submit A's assignment
    for name in ("draft", "submit", "beat"):
        r = b.post(url(name, study, a.pk), item_page_fields(comments="hijack"))
        assert r.status_code == 403
    assert "hijack" not in json.dumps(Assignment.objects.get(pk=a.pk).draft.data)


def test_annotator_pages_show_no_judge_outputs_or_other_labels(client):
    study = make_study(n_items=1, overlap=3)
    from django.test import Client

    first = Client()
    to_items(first, study, "A")
    first.get(url("item", study))
    a = current("A")
    age(a)
    first.post(
        url("submit", study, a.pk),
        item_page_fields(choice="failure", **{"f-0-desc": "LABEL-BY-A", "f-0-l2": "1"}),
    )
    to_items(client, study, "B")
    page = client.get(url("item", study)).content.decode()
    assert current("B").item_id == a.item_id  # the same item A labelled
    assert "LABEL-BY-A" not in page
    for word in (
        "judge",
        "Judgment",
        "reasoning",
        "How2Score",
        "gen-",
    ):  # no judge output, no generator name
        assert word not in page


@pytest.mark.parametrize("name", ["study_list", "study_create"])
def test_researcher_pages_refuse_annotators(client, make_user, name):
    study = make_study()
    to_items(client, study)
    r = client.get(reverse(f"annotation:{name}"))
    assert r.status_code == 302 and "/accounts/login/" in r.url  # anonymous participant
    annotator = make_user("ann", role="annotator")
    client.force_login(annotator)
    assert client.get(reverse(f"annotation:{name}")).status_code == 403
    assert client.get(reverse("annotation:study_progress", args=[study.pk])).status_code == 403
    assert (
        client.get(reverse("annotation:study_export", args=[study.pk, "jsonl"])).status_code == 403
    )
    assert client.get("/api/studies/").status_code == 403


def test_heartbeat_accumulates_active_time(client):
    study = make_study()
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    age(a, 60)
    assert client.post(url("beat", study, a.pk), {"active_ms": "12000"}).status_code == 204
    a.refresh_from_db()
    assert a.active_ms == 12000


def test_account_entry_for_in_house_annotators(client, make_user):
    study = make_study(entry="account")
    r = client.get(url("enter", study))
    assert r.status_code == 302 and "/accounts/login/" in r.url
    client.force_login(make_user("inhouse", role="annotator"))
    r = client.get(url("enter", study))
    assert r.url == url("consent", study)
    assert not Participant.objects.exists()  # following the link creates nothing
    assert client.get(url("consent", study)).status_code == 200
    r = client.post(url("consent", study), {"consent": "agree"})
    assert r.url == url("training", study)
    assert Participant.objects.get().user.username == "inhouse"


def test_codebook_partial_for_participants_only(client):
    study = make_study()
    assert client.get(url("codebook_partial", study)).status_code == 403
    to_items(client, study)
    html = client.get(url("codebook_partial", study)).content.decode()
    assert "Severe vagueness" in html and "Acceptable variations" in html


def test_item_page_counts_down_from_the_servers_seconds_left(client, monkeypatch):
    """The page shows, and its script starts from, the same rounded-up seconds left as the
    refusal of an early submit (annotation.rules.seconds_left)."""
    study = make_study(min_seconds_per_item=90)
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    frozen = a.served_at + timedelta(seconds=89, microseconds=999_600)
    monkeypatch.setattr(timezone, "now", lambda: frozen)
    html = client.get(url("item", study)).content.decode()
    assert 'data-seconds-left="1"' in html and 'data-elapsed="89"' in html
    assert "1 s until submission becomes open" in html
    assert 'id="submit-btn" disabled' in html
    r = client.post(url("submit", study, a.pk), item_page_fields(), follow=True)
    assert r.status_code == 200 and "(1 s left)" in r.content.decode()
    monkeypatch.setattr(timezone, "now", lambda: a.served_at + timedelta(seconds=90))
    html = client.get(url("item", study)).content.decode()
    assert 'data-seconds-left="0"' in html and "Time elapsed" in html
    assert 'id="submit-btn" disabled' not in html


def test_missed_attention_check_warns_then_screens_out(client):
    study = make_study(
        n_items=4,
        n_attention=2,
        attention_rate=1.0,
        attention_warn_after=1,
        attention_screen_after=2,
    )
    to_items(client, study)
    seen = []
    for _ in range(4):
        r = client.get(url("item", study))
        if r.status_code == 302:
            break
        a = current()
        seen.append(a.item.kind)
        age(a)
        client.post(
            url("submit", study, a.pk), item_page_fields(choice="none")
        )  # planted items expect a failure
        if a.item.kind == "attention" and len(seen) == 2:
            page = client.get(url("item", study)).content.decode()
            assert "Heads up: you have missed 1 attention check" in page
    assert seen == ["regular", "attention", "regular", "attention"]
    r = client.get(url("item", study))
    assert r.status_code == 302 and r.url == url("screened_out", study)
    page = client.get(r.url).content.decode()
    assert study.screened_out_code in page
    assert "Too many attention checks were missed" in page
    assert "did not match the codebook" not in page


def test_failed_qualification_says_so_on_the_screened_out_page(client):
    study = make_study(n_qualification=2, qualification_pass_threshold=1.0)
    to_items(client, study)
    for _ in range(2):
        r = client.get(url("item", study))
        assert r.status_code == 200 and "This is a qualification item" in r.content.decode()
        client.post(
            url("submit", study, current().pk), item_page_fields(choice="none")
        )  # expects failure
    r = client.get(url("item", study))
    assert r.status_code == 302 and r.url == url("screened_out", study)
    page = client.get(r.url).content.decode()
    assert "did not match the codebook closely enough" in page
    assert "Too many attention checks" not in page


def test_late_submit_of_an_item_given_to_someone_else_moves_on(client, settings):
    from django.test import Client

    settings.ANNOTATION_SWEEP_SECONDS = 0
    study = make_study(n_items=2, overlap=1, assignment_timeout_minutes=1)
    to_items(client, study, "SLOW")
    client.get(url("item", study))
    slow = current("SLOW")
    Assignment.objects.filter(pk=slow.pk).update(
        served_at=timezone.now() - timedelta(minutes=10),
        last_seen_at=timezone.now() - timedelta(minutes=10),
    )
    other = Client()
    to_items(other, study, "FAST")
    other.get(url("item", study))  # sweeps: SLOW's item goes back to the pool and FAST gets it
    assert current("FAST").item_id == slow.item_id
    r = client.post(url("submit", study, slow.pk), item_page_fields())
    assert r.status_code == 302 and r.url == url("item", study)
    page = client.get(r.url, follow=True).content.decode()
    assert "returned to the pool" in page
    assert Annotation.objects.filter(assignment=slow).count() == 0


@pytest.mark.django_db
def test_step_bar_shows_qualification_only_when_the_study_has_it(client):
    from annotation.models import Study, StudyItem
    from tests.annotation.factories import (
        make_study,
    )

    study = make_study(n_qualification=2)
    params = {
        "PROLIFIC_PID": "stepbar1",
        "STUDY_ID": study.prolific_study_id or "s",
        "SESSION_ID": "x",
    }
    client.get(f"/study/s/{study.slug}/", params)
    html = client.get(f"/study/s/{study.slug}/consent/").content.decode()
    assert "<li>Qualification</li>" in html
    StudyItem.objects.filter(study=study, kind=StudyItem.Kind.QUALIFICATION).delete()
    html = client.get(f"/study/s/{study.slug}/consent/").content.decode()
    assert "<li>Qualification</li>" not in html
    assert Study.objects.filter(pk=study.pk).exists()


def test_a_submit_builds_the_study_form_and_the_item_view_once(client, monkeypatch):
    """The view that parses the answer hands its form and item view down: the checks, the
    stored answer and a known item's result use them, none builds its own."""
    from annotation.selectors import forms

    built = {"form": 0, "view": 0}

    def counting(name, real):
        def build(*args, **kwargs):
            built[name] += 1
            return real(*args, **kwargs)

        return build

    monkeypatch.setattr(forms, "form_for", counting("form", forms.form_for))
    monkeypatch.setattr(forms, "ItemView", counting("view", forms.ItemView))
    study = make_study()
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    age(a)
    built.update(form=0, view=0)
    assert client.post(url("submit", study, a.pk), item_page_fields()).status_code == 302
    assert Annotation.objects.filter(assignment=a).exists()
    assert built == {"form": 1, "view": 1}
