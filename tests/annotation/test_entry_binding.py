"""A Prolific participant is bound to the SESSION_ID of their first entry (no
takeover by PID), new participants per client address are limited, and idle assignments go
back to the pool on the study's timeout. Real HTTP through Django's client, on PostgreSQL."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, EntryEvent, Participant
from annotation.services.assignment import assignments_release_stale
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db


def url(name, study, *args):
    return reverse(f"annotation:{name}", args=[study.slug, *args])


def enter(client, study, pid="PID1", session="SESS1", ip="10.0.0.1"):
    return client.get(
        url("enter", study),
        {"PROLIFIC_PID": pid, "STUDY_ID": "S1", "SESSION_ID": session},
        REMOTE_ADDR=ip,
    )


def join(client, study, pid, ip):
    """Follow the link and consent: the participant is created by the consent."""
    r = enter(client, study, pid=pid, ip=ip)
    if r.status_code != 302:
        return r
    return client.post(url("consent", study), {"consent": "agree"}, REMOTE_ADDR=ip)


def to_item(client, study, **kw):
    r = enter(client, study, **kw)
    assert r.status_code == 302, r.content[:300]
    client.post(url("consent", study), {"consent": "agree"})
    client.post(url("training", study))
    r = client.get(url("item", study))
    assert r.status_code == 200
    return r


def test_same_pid_other_session_is_refused_and_shown_to_the_researcher(admin_client):
    study = make_study(n_items=3)
    first = Client()
    to_item(first, study)
    item_id = Assignment.objects.get(participant__prolific_pid="PID1").item_id

    attacker = Client()
    r = enter(attacker, study, session="SESS-OTHER", ip="10.9.9.9")
    assert r.status_code == 409
    page = r.content.decode()
    assert "already has a session in progress" in page
    assert "continue in the browser where you started" in page
    # no cookie for the attacker: the item page does not open, nothing was resumed
    assert f"h2r_p_{study.slug}" not in r.cookies
    r = attacker.get(url("item", study))
    assert r.status_code == 403
    p = Participant.objects.get(prolific_pid="PID1")
    assert p.prolific_session_id == "SESS1"  # the binding was not overwritten
    event = EntryEvent.objects.get()
    assert event.kind == EntryEvent.Kind.SESSION_CONFLICT and event.participant == p
    assert event.client_ip == "10.9.9.9" and "SESS-OTHER" in event.detail
    # the first browser still works on its item
    assert first.get(url("item", study)).status_code == 200
    assert Assignment.objects.get(participant=p).item_id == item_id
    # the researcher sees the refusal on the study's progress page
    r = admin_client.get(reverse("annotation:study_progress", args=[study.pk]))
    assert r.status_code == 200
    assert "Refused entries" in r.content.decode() and "SESS-OTHER" in r.content.decode()


def test_same_pid_and_session_from_a_new_browser_resumes():
    study = make_study(n_items=3)
    to_item(Client(), study)
    assignment = Assignment.objects.get()
    other_browser = Client()
    r = enter(other_browser, study, ip="10.0.0.2")
    assert r.status_code == 302 and r.url == url("item", study)
    r = other_browser.get(url("item", study))
    assert r.status_code == 200
    assert Assignment.objects.get().pk == assignment.pk  # the same item, resumed
    assert not EntryEvent.objects.exists()


def test_other_session_after_finishing_shows_no_items():
    study = make_study(n_items=3)
    c = Client()
    enter(c, study)
    c.post(url("consent", study), {"consent": "disagree"})
    r = enter(Client(), study, session="SESS2")
    assert r.status_code == 302 and r.url == url("declined", study)
    assert not EntryEvent.objects.exists()


def test_new_participants_per_address_are_limited(settings):
    settings.ANNOTATION_NEW_PARTICIPANTS_PER_IP = 3
    study = make_study(n_items=3)
    for i in range(3):
        assert join(Client(), study, f"SQ{i}", "10.1.1.1").status_code == 302
    for i in range(3, 6):  # squatting from the same address is refused, nothing created
        r = join(Client(), study, f"SQ{i}", "10.1.1.1")
        assert r.status_code == 429 and "Too many new participants" in r.content.decode()
    assert Participant.objects.count() == 3
    assert EntryEvent.objects.filter(kind=EntryEvent.Kind.RATE_LIMITED).count() == 1
    # another address still gets in; a participant already in comes back from the same address
    assert join(Client(), study, "FRESH", "10.2.2.2").status_code == 302
    assert enter(Client(), study, pid="SQ0", ip="10.1.1.1").status_code == 302
    # past the window the address may bring new participants again
    Participant.objects.update(created_at=timezone.now() - timedelta(hours=2))
    assert join(Client(), study, "LATER", "10.1.1.1").status_code == 302
    assert Participant.objects.count() == 5


def test_idle_assignment_is_released_on_the_study_timeout():
    study = make_study(n_items=3, overlap=1)
    to_item(Client(), study)
    a = Assignment.objects.get()
    assert assignments_release_stale(study=study) == 0
    late = timezone.now() + timedelta(minutes=study.assignment_timeout_minutes + 1)
    assert assignments_release_stale(study=study, now=late) == 1
    a.refresh_from_db()
    assert a.state == Assignment.State.EXPIRED and a.item.n_assigned == 0
