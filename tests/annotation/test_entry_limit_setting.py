"""The limit of new participants per network address is a study setting: 30 by
default (``ANNOTATION_NEW_PARTICIPANTS_PER_IP``), set on the new-study form, in the API and on
the progress page; a lab study raises it so 50 people behind one address all get in; the
refusal page (429) says why and what to do. Real HTTP through Django's client, PostgreSQL."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import EntryEvent, Participant, Study
from tests.annotation.factories import make_generations, make_study, study_page_fields

pytestmark = pytest.mark.django_db

LAB = "10.9.9.9"  # a lab: everyone behind one address


def join(study, pid, ip=LAB):
    """Follow the Prolific link and consent (the participant is created by the consent)."""
    c = Client()
    enter = reverse("annotation:enter", args=[study.slug])
    r = c.get(
        enter, {"PROLIFIC_PID": pid, "STUDY_ID": "S1", "SESSION_ID": f"s-{pid}"}, REMOTE_ADDR=ip
    )
    if r.status_code != 302:
        return r
    return c.post(
        reverse("annotation:consent", args=[study.slug]), {"consent": "agree"}, REMOTE_ADDR=ip
    )


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client


def test_the_default_is_the_deployment_setting(settings):
    assert make_study(n_items=1).new_participants_per_address == 30
    settings.ANNOTATION_NEW_PARTICIPANTS_PER_IP = 7
    assert make_study(n_items=1).new_participants_per_address == 7


def test_a_lab_study_lets_fifty_people_in_from_one_address():
    lab = make_study(n_items=60, overlap=1, new_participants_per_address=60)
    statuses = [join(lab, f"LAB{i:02d}").status_code for i in range(50)]
    assert statuses == [302] * 50
    assert Participant.objects.filter(study=lab, entry_ip=LAB).count() == 50
    assert not EntryEvent.objects.filter(study=lab).exists()


def test_over_the_limit_the_page_says_why_with_a_429():
    study = make_study(n_items=5, new_participants_per_address=2)
    assert [join(study, p).status_code for p in ("A1", "A2")] == [302, 302]
    r = join(study, "A3")
    page = r.content.decode()
    assert r.status_code == 429
    assert "Too many new participants from your network address" in page
    assert "2 new participants have already joined this study from your network address" in page
    assert "in the last 60 minutes" in page
    assert "“New participants per network address per hour”" in page
    assert "ask the researcher to raise that setting" in page and "Nothing was recorded" in page
    assert Participant.objects.filter(study=study).count() == 2
    event = EntryEvent.objects.get(study=study, kind=EntryEvent.Kind.RATE_LIMITED)
    assert "study setting" in event.detail
    # 0: no limit at all
    Study.objects.filter(pk=study.pk).update(new_participants_per_address=0)
    assert join(study, "A4").status_code == 302


def test_the_new_study_form_sets_it_and_checks_it(researcher):
    gens = make_generations(3)
    url = reverse("annotation:study_create")
    r = researcher.get(url)
    assert 'name="new_participants_per_address"' in r.content.decode()
    assert "New participants per network address per hour" in r.content.decode()
    r = researcher.post(
        url, study_page_fields(gens, 3, name="Lab", new_participants_per_address=-1)
    )
    assert r.status_code == 200 and not Study.objects.filter(name="Lab").exists()
    assert "greater than or equal to 0" in r.content.decode()
    r = researcher.post(
        url, study_page_fields(gens, 3, name="Lab", new_participants_per_address=80)
    )
    assert r.status_code == 302
    assert Study.objects.get(name="Lab").new_participants_per_address == 80
    # left out (older clients of the form): the default
    r = researcher.post(url, study_page_fields(gens, 3, name="Default"))
    assert r.status_code == 302
    assert Study.objects.get(name="Default").new_participants_per_address == 30


def test_the_progress_page_changes_it_and_refuses_bad_values(researcher):
    study = make_study(n_items=3)
    page = researcher.get(reverse("annotation:study_progress", args=[study.pk])).content.decode()
    assert 'id="entry-limit"' in page and 'value="30"' in page
    url = reverse("annotation:study_entry_limit", args=[study.pk])
    r = researcher.post(url, {"new_participants_per_address": "120"})
    assert r.status_code == 302
    study.refresh_from_db()
    assert study.new_participants_per_address == 120
    for bad in ("abc", "-3", "", "100001"):
        r = researcher.post(url, {"new_participants_per_address": bad})
        text = r.content.decode()
        assert r.status_code == 400, bad
        assert "New participants per network address per hour:" in text, bad
        study.refresh_from_db()
        assert study.new_participants_per_address == 120


def test_only_researchers_change_it(client, make_user):
    study = make_study(n_items=1)
    url = reverse("annotation:study_entry_limit", args=[study.pk])
    client.force_login(make_user("ann"))
    assert client.post(url, {"new_participants_per_address": "500"}).status_code == 403
    study.refresh_from_db()
    assert study.new_participants_per_address == 30


def test_the_api_reads_and_sets_it(make_user):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(make_user("res", role="researcher"))
    gens = make_generations(2)
    body = {
        "name": "Lab API",
        "generation_ids": [g.pk for g in gens],
        "new_participants_per_address": 75,
    }
    r = api.post("/api/studies/", body, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["new_participants_per_address"] == 75
    body |= {"name": "Bad", "new_participants_per_address": -1}
    r = api.post("/api/studies/", body, format="json")
    assert r.status_code == 400 and "new_participants_per_address" in r.json()
