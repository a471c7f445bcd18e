"""Prolific webhooks against the local Prolific server: subscribing from the app (secret,
subscriptions, confirmation), and the receiving endpoint: signature over the raw body,
refusals that change nothing, one application per event, out-of-order events, study status.

Deliveries are applied by the Celery task, run eagerly here after the commit (a real worker
applies them in the browser test)."""

from __future__ import annotations

import json
import time

import pytest
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from annotation.models import (
    Assignment,
    Participant,
    ProlificCall,
    ProlificDelivery,
    ProlificStudy,
    ProlificSubmission,
    StudyItem,
)
from annotation.prolific import signature
from annotation.services import prolific_hooks as hooks
from annotation.services.assignment import participant_current_assignment
from config.celery import app
from tests.annotation.factories import make_study, working_participant

pytestmark = pytest.mark.django_db
PUBLIC = "https://h2r.example/study/prolific/hook/"
SECRET_KEYS = ["annotation:prolific:webhook-secret", "annotation:prolific:webhook-secret:read"]


@pytest.fixture
def configured(settings, prolific_server, monkeypatch):
    settings.PROLIFIC_WEBHOOK_URL = PUBLIC
    settings.PROLIFIC_WORKSPACE_ID = "WS1"
    monkeypatch.delenv("PROLIFIC_WEBHOOK_SECRET", raising=False)
    monkeypatch.setattr(app.conf, "task_always_eager", True)
    cache.delete_many(SECRET_KEYS)
    yield prolific_server
    cache.delete_many(SECRET_KEYS)


@pytest.fixture
def subscribed(configured, admin):
    hooks.subscriptions_create(user=admin)
    return configured


def test_subscribe_creates_the_secret_subscribes_and_confirms(configured, admin):
    added = hooks.subscriptions_create(user=admin)
    assert added == ["submission.status.change", "study.status.change"]
    assert set(configured.hook_secrets) == {"WS1"}
    subs = list(configured.subscriptions.values())
    assert {(s["event_type"], s["target_url"], s["is_enabled"]) for s in subs} == {
        ("submission.status.change", PUBLIC, True),
        ("study.status.change", PUBLIC, True),
    }
    assert configured.pending_confirm == {}  # both confirmed with their X-Hook-Secret
    actions = list(ProlificCall.objects.order_by("id").values_list("action", "study"))
    assert actions == [
        ("hook_secret", None),  # listed: none
        ("hook_secret", None),  # created
        ("hook_list", None),
        ("hook_subscribe", None),
        ("hook_confirm", None),
        ("hook_subscribe", None),
        ("hook_confirm", None),
    ]
    assert hooks.subscriptions_create(user=admin) == []  # already subscribed: nothing new
    assert len(configured.subscriptions) == 2 and len(configured.hook_secrets) == 1
    (first, *_) = subs
    hooks.subscription_delete(user=admin, subscription_id=first["id"])
    assert first["id"] not in configured.subscriptions


def test_an_http_url_or_no_workspace_is_refused_before_any_call(
    configured, admin, researcher, settings
):
    settings.PROLIFIC_WEBHOOK_URL = "http://h2r.example/study/prolific/hook/"
    with pytest.raises(ValidationError, match="not https"):
        hooks.subscriptions_create(user=admin)
    settings.PROLIFIC_WEBHOOK_URL = PUBLIC
    settings.PROLIFIC_WORKSPACE_ID = ""
    with pytest.raises(ValidationError, match="workspace"):
        hooks.subscriptions_create(user=admin)
    with pytest.raises(PermissionDenied):
        hooks.subscriptions_create(user=researcher)
    assert configured.requests == [] and not ProlificCall.objects.exists()


# --- receiving -------------------------------------------------------------------------------


@pytest.fixture
def pair(db):
    """A study of 2 items, k=1, one item per participant: PA holds one item, PB the other."""
    study = make_study(n_items=2, overlap=1, items_per_participant=1, prolific_study_id="PS1")
    ProlificStudy.objects.create(study=study, prolific_id="PS1", status="ACTIVE", total_places=2)
    people = {pid: working_participant(study, pid, session=f"SUB{pid}") for pid in ("PA", "PB")}
    held = {pid: participant_current_assignment(participant=p) for pid, p in people.items()}
    return study, people, held


def post(client, payload, *, secret, event_id=None, stamp=None, event_time=None, raw=None, **extra):
    body = raw if raw is not None else json.dumps(payload).encode()
    stamp = stamp or str(int(time.time()))
    headers = {
        "HTTP_X_PROLIFIC_REQUEST_SIGNATURE": signature.sign(
            secret=secret, timestamp=stamp, body=body
        ),
        "HTTP_X_PROLIFIC_REQUEST_TIMESTAMP": stamp,
        "HTTP_X_EVENT_ID": event_id or f"ev-{time.monotonic_ns()}",
        "HTTP_X_TIMESTAMP": str(event_time if event_time is not None else time.time()),
    }
    headers.update(extra)
    return client.post(
        reverse("annotation:prolific_hook"), data=body, content_type="application/json", **headers
    )


def sub_event(pid, status):
    return {
        "resource_id": f"SUB{pid}",
        "event_type": "submission.status.change",
        "participant_id": pid,
        "status": status,
    }


def secret_of(server):
    return server.hook_secrets["WS1"]["value"]


def test_a_returned_submission_frees_its_item_for_the_next_participant(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    study, people, held = pair
    with django_capture_on_commit_callbacks(execute=True):
        r = post(client, sub_event("PA", "RETURNED"), secret=secret_of(subscribed))
    assert r.status_code == 202
    assert Assignment.objects.get(pk=held["PA"].pk).state == "expired"
    assert StudyItem.objects.get(pk=held["PA"].item_id).n_assigned == 0
    assert Participant.objects.get(prolific_pid="PA").stage == "returned"
    delivery = ProlificDelivery.objects.get()
    assert delivery.accepted and "1 item(s) freed, session ended" in delivery.outcome
    # the next participant gets the freed item; nothing is assigned twice
    pc = working_participant(study, "PC", session="SUBPC")
    got = participant_current_assignment(participant=pc)
    assert got.item_id == held["PA"].item_id
    assert StudyItem.objects.get(pk=got.item_id).n_assigned == 1
    assert participant_current_assignment(participant=people["PA"]) is None  # session ended


@pytest.mark.parametrize(
    "kind,status,reason",
    [
        ("unsigned", 401, "unsigned"),
        ("stale", 401, "stale"),
        ("wrong secret", 401, "bad signature"),
        ("tampered", 401, "bad signature"),
        ("not json", 400, "not JSON"),
        ("no event id", 400, "X-Event-ID"),
    ],
)
def test_refused_deliveries_are_logged_and_change_nothing(
    subscribed, pair, client, django_capture_on_commit_callbacks, kind, status, reason
):
    _, _, held = pair
    secret = secret_of(subscribed)
    payload = sub_event("PA", "RETURNED")
    with django_capture_on_commit_callbacks(execute=True):
        if kind == "unsigned":
            r = client.post(
                reverse("annotation:prolific_hook"),
                data=json.dumps(payload),
                content_type="application/json",
            )
        elif kind == "stale":
            r = post(client, payload, secret=secret, stamp=str(int(time.time()) - 3600))
        elif kind == "wrong secret":
            r = post(client, payload, secret="not-the-secret")
        elif kind == "tampered":
            stamp = str(int(time.time()))
            good = signature.sign(
                secret=secret,
                timestamp=stamp,
                body=json.dumps(sub_event("PA", "APPROVED")).encode(),
            )
            r = post(
                client, payload, secret=secret, stamp=stamp, HTTP_X_PROLIFIC_REQUEST_SIGNATURE=good
            )
        elif kind == "not json":
            r = post(client, None, secret=secret, raw=b"RETURNED please")
        else:
            r = post(client, payload, secret=secret, HTTP_X_EVENT_ID="")
    assert r.status_code == status and reason in r.content.decode()
    refused = ProlificDelivery.objects.get()
    assert not refused.accepted and reason in refused.reason
    assert Assignment.objects.get(pk=held["PA"].pk).state == "active"
    assert not ProlificSubmission.objects.exists()
    assert Participant.objects.get(prolific_pid="PA").stage == "working"


def test_a_replayed_event_changes_nothing(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    study, _, _ = pair
    secret = secret_of(subscribed)
    with django_capture_on_commit_callbacks(execute=True):
        first = post(client, sub_event("PA", "RETURNED"), secret=secret, event_id="ev-1")
    pc = working_participant(study, "PC", session="SUBPC")
    taken = participant_current_assignment(participant=pc)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = post(client, sub_event("PA", "RETURNED"), secret=secret, event_id="ev-1")
    assert (first.status_code, again.status_code) == (202, 200)
    assert "Already received" in again.content.decode() and callbacks == []
    assert ProlificDelivery.objects.filter(accepted=True).count() == 1
    assert StudyItem.objects.get(pk=taken.item_id).n_assigned == 1  # not freed a second time
    assert Assignment.objects.get(pk=taken.pk).state == "active"


def test_out_of_order_events_keep_the_newest_status(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    _, _, held = pair
    secret, now = secret_of(subscribed), time.time()
    with django_capture_on_commit_callbacks(execute=True):
        post(client, sub_event("PB", "APPROVED"), secret=secret, event_time=now)
        post(client, sub_event("PB", "AWAITING REVIEW"), secret=secret, event_time=now - 60)
        post(client, sub_event("PA", "RETURNED"), secret=secret, event_time=now)
        post(client, sub_event("PA", "ACTIVE"), secret=secret, event_time=now - 30)
    statuses = dict(ProlificSubmission.objects.values_list("submission_id", "status"))
    assert statuses == {"SUBPB": "APPROVED", "SUBPA": "RETURNED"}
    outcomes = list(ProlificDelivery.objects.order_by("id").values_list("outcome", flat=True))
    assert "older than the recorded APPROVED; ignored" in outcomes[1]
    assert "older than the recorded RETURNED; ignored" in outcomes[3]
    assert Assignment.objects.get(pk=held["PB"].pk).state == "active"  # approved: kept
    assert Participant.objects.get(prolific_pid="PB").stage == "working"


def test_study_status_changes_update_the_study(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    secret, now = secret_of(subscribed), time.time()
    event = {"resource_id": "PS1", "event_type": "study.status.change", "metadata": {}}
    with django_capture_on_commit_callbacks(execute=True):
        post(client, {**event, "status": "PAUSED"}, secret=secret, event_time=now)
        post(client, {**event, "status": "ACTIVE"}, secret=secret, event_time=now - 10)
    state = ProlificStudy.objects.get()
    assert state.status == "PAUSED"


def test_the_secret_is_read_from_prolific_when_not_cached_and_again_when_replaced(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    cache.delete_many(SECRET_KEYS)
    secret = secret_of(subscribed)
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, sub_event("PB", "AWAITING REVIEW"), secret=secret).status_code == 202
    reads = ProlificCall.objects.filter(action="hook_secret", user=None)
    assert reads.count() == 1  # read once, logged (no user: the receiving endpoint)
    subscribed.hook_secrets["WS1"]["value"] = "a-new-secret"  # replaced on Prolific
    with django_capture_on_commit_callbacks(execute=True):
        early = post(client, sub_event("PB", "APPROVED"), secret="a-new-secret")
    assert early.status_code == 401 and reads.count() == 1  # at most one read a minute
    cache.delete("annotation:prolific:webhook-secret:read")  # a minute later
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, sub_event("PB", "APPROVED"), secret="a-new-secret").status_code == 202
    assert hooks.webhook_secret() == "a-new-secret" and reads.count() == 2
    assert ProlificSubmission.objects.get().status == "APPROVED"


def test_the_webhooks_page_subscribes_and_lists(configured, admin, client):
    client.force_login(admin)
    page = client.post(reverse("annotation:prolific_hooks"), follow=True).content.decode()
    assert "Subscribed: submission.status.change, study.status.change." in page
    assert page.count("yes") >= 2 and PUBLIC in page
    assert (
        client.post(reverse("annotation:prolific_hooks"), {"remove": "no such!"}).status_code == 302
    )


def test_odd_requests_get_a_4xx_never_a_5xx(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    url = reverse("annotation:prolific_hook")
    assert client.get(url).status_code == 405
    secret = secret_of(subscribed)
    with django_capture_on_commit_callbacks(execute=True):
        for stamp in ("nan", "inf", "-1e309"):
            assert (
                post(client, sub_event("PA", "RETURNED"), secret=secret, stamp=stamp).status_code
                == 401
            )
        odd_time = post(client, sub_event("PB", "APPROVED"), secret=secret, event_time="1e300")
        not_a_dict = post(client, ["a", "list"], secret=secret)
        odd_status = post(client, sub_event("PB", "EXPLODED"), secret=secret)
    assert odd_time.status_code == 202  # an unusable X-Timestamp: the signed time is used
    assert not_a_dict.status_code == 400
    assert odd_status.status_code == 202
    assert (
        "not a submission status followed here"
        in ProlificDelivery.objects.get(status="EXPLODED").outcome
    )
    assert Assignment.objects.get(pk=pair[2]["PA"].pk).state == "active"


def test_a_returned_participant_coming_back_sees_that_their_place_ended(
    subscribed, pair, client, django_capture_on_commit_callbacks
):
    study, _, _ = pair
    with django_capture_on_commit_callbacks(execute=True):
        post(client, sub_event("PA", "RETURNED"), secret=secret_of(subscribed))
    for session in ("SUBPA", "ANOTHER"):  # the same link, or a new attempt
        entry = reverse("annotation:enter", args=[study.slug])
        r = client.get(entry, {"PROLIFIC_PID": "PA", "STUDY_ID": "PS1", "SESSION_ID": session})
        assert r.status_code == 302 and r["Location"].endswith(f"/s/{study.slug}/returned/")
