"""Deliveries as the local Prolific server sends them (over HTTP to the running app): signed
events from real status changes, a delivery signed with the wrong secret, a replay of a
delivery, and events released in another order than they happened. The task applying them
runs eagerly in the app's thread here (a real worker does in the browser test)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation.models import (
    Assignment,
    Participant,
    ProlificDelivery,
    ProlificStudy,
    ProlificSubmission,
    StudyItem,
)
from annotation.services import prolific_hooks as hooks
from annotation.services.assignment import participant_current_assignment
from config.celery import app
from tests.annotation.factories import make_study, working_participant

pytestmark = pytest.mark.django_db(transaction=True)
PUBLIC = "https://h2r.example/study/prolific/hook/"
SECRET_KEYS = ["annotation:prolific:webhook-secret", "annotation:prolific:webhook-secret:read"]


@pytest.fixture
def live(settings, prolific_server, live_server, monkeypatch, admin):
    settings.PROLIFIC_WEBHOOK_URL = PUBLIC
    settings.PROLIFIC_WORKSPACE_ID = "WS1"
    monkeypatch.setattr(app.conf, "task_always_eager", True)
    cache.delete_many(SECRET_KEYS)
    prolific_server.routes[PUBLIC] = f"{live_server.url}/study/prolific/hook/"
    hooks.subscriptions_create(user=admin)
    study = make_study(n_items=2, overlap=1, items_per_participant=1, prolific_study_id="X")
    prolific_server.studies["X"] = {
        "id": "X",
        "status": "ACTIVE",
        "total_available_places": 2,
        "places_taken": 0,
    }
    ProlificStudy.objects.create(study=study, prolific_id="X", status="ACTIVE", total_places=2)
    yield prolific_server, study
    cache.delete_many(SECRET_KEYS)


def enter(server, study, pid):
    sub = server.take_place("X", pid)
    p = working_participant(study, pid, session=sub)
    return sub, participant_current_assignment(participant=p)


def test_wrong_secret_and_replay_through_the_server(live):
    server, study = live
    sub, held = enter(server, study, "PA")
    _, other = enter(server, study, "PB")  # the other item: none is free now
    payload = {
        "resource_id": sub,
        "event_type": "submission.status.change",
        "participant_id": "PA",
        "status": "RETURNED",
    }
    forged = server.deliver(PUBLIC, "WS1", payload, secret="guessed")
    stale = server.deliver(PUBLIC, "WS1", payload, timestamp="1000000000")
    unsigned = server.deliver(PUBLIC, "WS1", payload, unsigned=True)
    assert (forged.answer, stale.answer, unsigned.answer) == (401, 401, 401), forged.answer_text
    assert Assignment.objects.get(pk=held.pk).state == "active"
    server.set_status(sub, "RETURNED")  # the real change: Prolific signs and delivers it
    real = server.deliveries[-1]
    assert real.answer == 202 and b'"RETURNED"' in real.body
    assert Assignment.objects.get(pk=held.pk).state == "expired"
    _, third = enter(server, study, "PC")  # PA's freed item
    assert third.item_id == held.item_id
    replay = server.send(real)  # the same delivery again (same X-Event-ID)
    assert replay.answer == 200
    assert StudyItem.objects.get(pk=third.item_id).n_assigned == 1
    assert Assignment.objects.get(pk=third.pk).state == "active"
    assert ProlificDelivery.objects.filter(accepted=True).count() == 1
    assert ProlificDelivery.objects.filter(accepted=False).count() == 3
    assert other.item_id != third.item_id


def test_events_released_out_of_order(live):
    server, study = live
    sub, held = enter(server, study, "PA")
    server.hold()
    server.set_status(sub, "AWAITING REVIEW")
    server.set_status(sub, "APPROVED")
    deliveries = server.release(order=[1, 0])  # APPROVED arrives first
    assert [d.answer for d in deliveries] == [202, 202]
    assert ProlificSubmission.objects.get(submission_id=sub).status == "APPROVED"
    assert Participant.objects.get(prolific_pid="PA").stage == "working"
    assert Assignment.objects.get(pk=held.pk).state == "active"


def test_a_lost_delivery_is_reconciled_by_the_slower_poll(live, settings, client, researcher):
    from datetime import timedelta

    from django.urls import reverse
    from django.utils import timezone

    from annotation.tasks import prolific_poll

    server, study = live
    sub_a, held_a = enter(server, study, "PA")
    sub_b, held_b = enter(server, study, "PB")
    server.set_status(sub_a, "RETURNED")  # delivered and applied
    assert Assignment.objects.get(pk=held_a.pk).state == "expired"
    server.hold()
    server.set_status(sub_b, "RETURNED")
    server.held = None  # PB's delivery is lost on the way, never to come
    assert Assignment.objects.get(pk=held_b.pk).state == "active"
    # webhooks on: the beat task still reconciles, a study never read is due at once
    assert prolific_poll() == 1
    assert Assignment.objects.get(pk=held_b.pk).state == "expired"
    assert ProlificSubmission.objects.get(submission_id=sub_b).source == "poll"
    client.force_login(researcher)
    page = client.get(reverse("annotation:prolific_study", args=[study.pk])).content.decode()
    assert "Last reconciled with Prolific" in page and "by the beat task: 1 change" in page
    assert "PB: recorded RETURNED" in page and "PA: " not in page  # PA came by webhook
    # read just now: the next beats leave it until PROLIFIC_RECONCILE_SECONDS have passed
    assert prolific_poll() == 0
    old = timezone.now() - timedelta(seconds=settings.PROLIFIC_RECONCILE_SECONDS + 1)
    ProlificStudy.objects.filter(study=study).update(synced_at=old)
    assert prolific_poll() == 1
    page = client.get(reverse("annotation:prolific_study", args=[study.pk])).content.decode()
    assert "nothing the webhooks had not brought" in page
