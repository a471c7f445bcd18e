"""Every request the app's Prolific client sends and every answer and webhook payload the local
Prolific server gives parse with the models of ``pyrolific`` (generated from Prolific's published
OpenAPI description; used here only, never as the app's client). A field a model does not know
counts as a drift, so a misspelt or invented field fails as a missing one does."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from pyrolific import models as m
from pyrolific.types import Unset

from annotation.models import StudyPay
from annotation.prolific.client import Bonus, ProlificClient
from annotation.selectors.prolific_study import draft_defaults
from annotation.services import prolific_study as life
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db
URL = "https://h2r.example/study/s/abc/"
ID = r"[^/]+"


class ConfirmBody:
    """Confirming a subscription: the description names ``SubscriptionDetail`` as its body, but
    Prolific's webhook guide sends only the ``X-Hook-Secret`` value, as ``secret``."""

    __name__ = "ConfirmBody"

    @staticmethod
    def from_dict(data: dict):
        if set(data) != {"secret"} or not isinstance(data["secret"], str) or not data["secret"]:
            raise ValueError(f"expected {{'secret': str}}, got {sorted(data)}")
        return data


# (method, path pattern) → (request model or None, {status: response model or None})
CONTRACT = [
    ("POST", r"studies", m.CreateStudy, {201: m.Study}),
    ("GET", rf"studies/{ID}", None, {200: m.Study}),
    ("PATCH", rf"studies/{ID}", m.CreateStudy, {200: m.Study}),
    ("POST", rf"studies/{ID}/transition", m.StudyTransition, {200: m.Study}),
    ("GET", rf"studies/{ID}/submissions", None, {200: m.SubmissionListResponse}),
    ("POST", rf"submissions/{ID}/transition", m.SubmissionTransition, {200: m.Submission}),
    (
        "POST",
        rf"submissions/{ID}/request-return",
        m.RequestSubmissionReturnBody,
        {200: m.ReturnRequestedResponse},
    ),
    ("POST", r"submissions/bonus-payments", m.CreateBonusPaymentsBody, {201: m.BulkBonus}),
    ("POST", rf"bulk-bonus-payments/{ID}/pay", None, {202: None}),
    (
        "POST",
        rf"participant-groups/{ID}/participants",
        m.ParticipantIDList,
        {200: m.ParticipantGroupMembershipListResponse},
    ),
    ("GET", r"hooks/secrets", None, {200: m.SecretList}),
    ("POST", r"hooks/secrets", m.CreateSecret, {201: m.SecretDetail}),
    ("GET", r"hooks/subscriptions", None, {200: m.SubscriptionList}),
    ("POST", r"hooks/subscriptions", m.SubscriptionDetail, {201: m.SubscriptionList}),
    ("POST", rf"hooks/subscriptions/{ID}", ConfirmBody, {200: m.SubscriptionDetail}),
    ("DELETE", rf"hooks/subscriptions/{ID}", None, {204: None}),
]


def _unknown(obj, where: str = "") -> list[str]:
    """Fields a parsed model (or a model inside it) kept as additional properties."""
    found = []
    extra = getattr(obj, "additional_properties", None)
    if extra:
        found += [f"{where}{key}" for key in extra]
    if hasattr(obj, "__attrs_attrs__"):
        for attr in obj.__attrs_attrs__:
            if attr.name != "additional_properties":
                found += _unknown(getattr(obj, attr.name), f"{where}{attr.name}.")
    elif isinstance(obj, list):
        for item in obj:
            found += _unknown(item, where)
    return found


# the study detail's schema leaves out what the study list documents (places_taken: "submissions
# started excluding timed out and returned"); the app reads it from the detail, as Prolific sends
DOCUMENTED_ELSEWHERE = {m.Study: m.StudyShort}
PAGINATED = {m.SubmissionListResponse}


def parses(model, data, what: str) -> None:
    try:
        parsed = model.from_dict(json.loads(json.dumps(data)))
    except (KeyError, ValueError, TypeError) as exc:
        raise AssertionError(f"{what} does not parse as {model.__name__}: {exc!r}") from exc
    assert not isinstance(parsed, Unset)
    unknown = _unknown(parsed)
    if model in PAGINATED:  # the envelope of Prolific's paginated lists (API reference, Pagination)
        unknown = [name for name in unknown if name not in ("_links", "meta")]
    if model in DOCUMENTED_ELSEWHERE:
        known = {a.name for a in DOCUMENTED_ELSEWHERE[model].__attrs_attrs__}
        unknown = [name for name in unknown if name not in known]
    assert unknown == [], f"{what}: fields {model.__name__} does not know"


def check_exchanges(server) -> set[str]:
    """Each exchange against :data:`CONTRACT`; the patterns that were met."""
    met = set()
    for method, path, body, status, payload in server.exchanges:
        rest = path.split("/api/v1/", 1)[1].strip("/")
        row = next((r for r in CONTRACT if r[0] == method and re.fullmatch(r[1], rest)), None)
        if row is None:
            raise AssertionError(f"no published model for {method} {path}")
        _verb, pattern, request_model, answers = row
        what = f"{method} {path}"
        if request_model is not None:
            parses(request_model, body or {}, f"the body of {what}")
        if status < 400:
            assert status in answers, f"{what} answered {status}, Prolific answers {answers}"
            if answers[status] is not None:
                parses(answers[status], payload, f"the answer to {what}")
        met.add(f"{method} {pattern}")
    return met


@pytest.fixture
def study(db):
    s = make_study(n_items=6, overlap=2, items_per_participant=3, min_seconds_per_item=90)
    StudyPay.objects.create(
        study=s, reward=Decimal("1.20"), estimated_minutes=0, exclusion_group_id="GEXCL"
    )
    return s


def test_every_call_and_answer_parses_as_prolifics_published_api(
    study, admin, prolific_server, settings
):
    draft = draft_defaults(study=study)
    state = life.prolific_study_create(study=study, user=admin, draft=draft, study_url=URL)
    life.prolific_study_publish(study=study, user=admin)
    life.prolific_places_add(study=study, user=admin, places=2)
    life.prolific_study_transition(study=study, user=admin, action="PAUSE")
    life.prolific_study_transition(study=study, user=admin, action="START")
    life.prolific_study_sync(study=study, user=admin)
    sid = state.prolific_id
    subs = [prolific_server.take_place(sid, pid) for pid in ("P_A", "P_B", "P_C")]
    for sub in subs:
        prolific_server.set_status(sub, "AWAITING REVIEW")
    client = ProlificClient()
    client.list_submissions(sid)
    client.approve(subs[0])
    client.reject(subs[1], category="LOW_EFFORT", message="m" * 120)
    client.request_return(subs[2], reasons=["Did not finish the items."])
    bulk = client.create_bonuses(sid, [Bonus("P_A", "0.50")])
    client.pay_bonuses(bulk["id"])
    prolific_server.groups["G1"] = []
    client.add_to_group("G1", ["P_A"])
    client.create_secret("ws1")
    client.list_secrets("ws1")
    sub = client.create_subscription(
        workspace_id="ws1",
        event_type="submission.status.change",
        target_url="https://h2r.example/hook/",
    )
    client.list_subscriptions("ws1")
    client.confirm_subscription(sub[0]["id"], sub[1])
    client.delete_subscription(sub[0]["id"])
    client.get_study(sid)
    life.prolific_study_transition(study=study, user=admin, action="STOP")
    met = check_exchanges(prolific_server)
    assert met == {f"{verb} {pattern}" for verb, pattern, *_ in CONTRACT}, "every call tried"


def test_webhook_payloads_parse_as_prolifics_subscription_events(prolific_server):
    """A delivery's body is a subscription event's ``payload``: its event type one the hooks API
    lists, its ``status`` one of the resource's statuses."""
    listed = m.EventTypeList.from_dict(
        prolific_server._route_hooks("GET", ["hooks", "event-types"], {}, {})[1]
    )
    types = {e.event_type for e in listed.results}
    statuses = {
        "submission.status.change": m.SubmissionStatus,
        "study.status.change": m.StudyStatus,
    }
    prolific_server.add_study("S1")
    study = prolific_server.studies["S1"]
    study.update(total_available_places=2, places_taken=0)
    prolific_server.hold()
    subs = [prolific_server.take_place("S1", pid) for pid in ("P_A", "P_B")]
    prolific_server.set_status(subs[0], "RETURNED")
    prolific_server.set_status(subs[1], "TIMED-OUT")
    prolific_server._set_study_status(study, "PAUSED")
    prolific_server._flush()
    seen = set()
    for event_type, payload, _stamp in prolific_server.held:
        event = m.SubscriptionEvent.from_dict(
            {
                "event_type": event_type,
                "resource_id": payload["resource_id"],
                "status": "SUCCEEDED",
                "target_url": "https://h2r.example/hook/",
                "payload": payload,
            }
        )
        assert event.event_type in types and event.payload.additional_properties == payload
        assert payload["event_type"] == event_type
        statuses[event_type](payload["status"])  # a status Prolific has
        seen.add((event_type, payload["status"]))
    assert seen >= {
        ("submission.status.change", "RETURNED"),
        ("submission.status.change", "TIMED-OUT"),
        ("study.status.change", "PAUSED"),
    }
