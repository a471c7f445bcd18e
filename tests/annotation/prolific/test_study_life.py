"""A study's life on Prolific from the app, against the local Prolific server: create (what
is sent), pilot and its proposal, publish, pause, resume, stop, add places, reading back (the
poll's path frees returned places), roles, refusals before any call, and the pages."""

from __future__ import annotations

import html
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from annotation.models import Assignment, Participant, ProlificCall, ProlificStudy, StudyPay
from annotation.selectors.prolific_study import draft_defaults, pilot_proposal
from annotation.services import prolific_study as life
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import annotation_submit
from annotation.tasks import prolific_poll
from tests.annotation.factories import full_label, make_study, working_participant

pytestmark = pytest.mark.django_db
URL = "https://h2r.example/study/s/abc/"


@pytest.fixture
def study(db):
    s = make_study(n_items=6, overlap=2, items_per_participant=3, min_seconds_per_item=90)
    StudyPay.objects.create(
        study=s, reward=Decimal("1.20"), estimated_minutes=0, exclusion_group_id="GEXCL"
    )
    return s


def created(study, admin, **changes):
    draft = draft_defaults(study=study)
    for k, v in changes.items():
        setattr(draft, k, v)
    return life.prolific_study_create(study=study, user=admin, draft=draft, study_url=URL)


def test_draft_is_prefilled_from_the_study_and_its_pay_terms(study):
    draft = draft_defaults(study=study)
    assert (draft.name, draft.reward, draft.places) == ("Test study", Decimal("1.20"), 4)  # 6x2/3
    assert draft.minutes == 5  # 3 items x 90 s, rounded up
    assert draft.block_groups == ["GEXCL"] and draft.devices == ["desktop"]


def test_create_sends_the_documented_study_and_links_it(study, admin, prolific_server):
    state = created(study, admin, devices=["desktop", "tablet"])
    study.refresh_from_db()
    sent = prolific_server.studies[state.prolific_id]
    assert study.prolific_study_id == state.prolific_id and state.status == "UNPUBLISHED"
    assert sent["external_study_url"] == (
        URL + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    codes = {c["code_type"]: c["code"] for c in sent["completion_codes"]}
    assert codes == {
        "COMPLETED": study.completion_code,
        "OTHER": study.screened_out_code,
        "FAILED_ATTENTION_CHECK": state.failed_attention_code,
    }
    assert (sent["reward"], sent["total_available_places"], sent["estimated_completion_time"]) == (
        120,
        4,
        5,
    )
    assert sent["device_compatibility"] == ["desktop", "tablet"]
    assert sent["filters"] == [
        {"filter_id": "participant_group_blocklist", "selected_values": ["GEXCL"]}
    ]
    call = ProlificCall.objects.get()
    assert (call.action, call.user, call.ok) == ("study_create", admin, True)
    with pytest.raises(ValidationError, match="already linked"):
        created(study, admin)


def test_bad_input_and_researchers_are_refused_before_any_call(
    study, admin, researcher, prolific_server
):
    with pytest.raises(PermissionDenied):
        created(study, researcher)
    for change, field in [
        ({"reward": Decimal("0")}, "reward"),
        ({"reward": Decimal("1e400")}, "reward"),
        ({"reward": Decimal("1.005")}, "reward"),
        ({"reward": Decimal("150")}, "reward"),  # 150.00 or 1.50? refused, never guessed
        ({"reward": None}, "reward"),
        ({"places": 0}, "places"),
        ({"minutes": 0}, "minutes"),
        ({"devices": ["fridge"]}, "devices"),
        ({"name": "bad\x00name"}, "name"),
        ({"description": "x" * 2001}, "description"),
        ({"block_groups": ["no spaces allowed!"]}, "block_groups"),
    ]:
        with pytest.raises(ValidationError) as err:
            created(study, admin, **change)
        assert field in err.value.message_dict, change
    assert prolific_server.requests == [] and not ProlificCall.objects.exists()


def test_pilot_then_proposal_then_confirm_adds_places(study, admin, prolific_server):
    state = created(study, admin)
    with pytest.raises(ValidationError, match="pilot"):
        life.prolific_study_publish(study=study, user=admin, pilot_places=4)  # not fewer
    life.prolific_study_publish(study=study, user=admin, pilot_places=2)
    remote = prolific_server.studies[state.prolific_id]
    assert (remote["status"], remote["total_available_places"]) == ("ACTIVE", 2)
    state.refresh_from_db()
    assert (state.status, state.pilot_places, state.total_places) == ("ACTIVE", 2, 2)
    # the pilot's participants label with measured active time: median 700 s
    for i, secs in enumerate((400, 700, 900)):
        p = working_participant(study, f"PILOT{i}", session=f"PS{i}")
        a = participant_current_assignment(participant=p)
        Assignment.objects.filter(pk=a.pk).update(active_ms=secs * 1000)
        done_at = a.served_at + timedelta(seconds=secs)
        annotation_submit(assignment=a, label=full_label(), active_ms=secs * 1000, now=done_at)
    proposal = pilot_proposal(study=study)
    assert proposal.minutes == 12 and proposal.reward == Decimal("1.80")  # 9.00/h x 12 min
    with pytest.raises(ValidationError):
        life.pilot_confirm(study=study, user=admin, minutes=0, reward=Decimal("1.80"), places=3)
    life.pilot_confirm(study=study, user=admin, minutes=12, reward=Decimal("1.80"), places=3)
    assert (
        remote["estimated_completion_time"],
        remote["reward"],
        remote["total_available_places"],
    ) == (
        12,
        180,
        5,
    )
    terms = StudyPay.objects.get(study=study)
    assert (terms.reward, terms.estimated_minutes) == (Decimal("1.80"), 12)
    with pytest.raises(ValidationError, match="no pilot"):
        life.pilot_confirm(study=study, user=admin, minutes=12, reward=Decimal("1.80"), places=3)


def test_pause_resume_stop_and_add_places(study, admin, prolific_server):
    state = created(study, admin)
    with pytest.raises(ValidationError, match="PAUSE is not possible while UNPUBLISHED"):
        life.prolific_study_transition(study=study, user=admin, action="PAUSE")
    with pytest.raises(ValidationError, match="Publish first"):
        life.prolific_places_add(study=study, user=admin, places=2)
    life.prolific_study_publish(study=study, user=admin)
    remote = prolific_server.studies[state.prolific_id]
    life.prolific_study_transition(study=study, user=admin, action="PAUSE")
    assert remote["status"] == "PAUSED" and ProlificStudy.objects.get().status == "PAUSED"
    life.prolific_study_transition(study=study, user=admin, action="START")
    assert remote["status"] == "ACTIVE"
    life.prolific_places_add(study=study, user=admin, places=2)
    assert remote["total_available_places"] == 6
    life.prolific_study_transition(study=study, user=admin, action="STOP")
    assert ProlificStudy.objects.get().status == "AWAITING REVIEW"
    with pytest.raises(ValidationError, match="action"):
        life.prolific_study_transition(study=study, user=admin, action="DELETE")
    actions = list(ProlificCall.objects.order_by("id").values_list("action", flat=True))
    assert actions == [
        "study_create",
        "study_publish",
        "study_pause",
        "study_start",
        "study_update",
        "study_stop",
    ]


def test_reading_back_frees_a_returned_place_and_records_the_others(
    study, admin, researcher, prolific_server
):
    state = created(study, admin)
    life.prolific_study_publish(study=study, user=admin)
    subs = {pid: prolific_server.take_place(state.prolific_id, pid) for pid in ("PA", "PB")}
    people = {pid: working_participant(study, pid, session=subs[pid]) for pid in subs}
    held = {pid: participant_current_assignment(participant=p) for pid, p in people.items()}
    prolific_server.set_status(subs["PA"], "RETURNED")
    prolific_server.submissions[subs["PB"]]["status"] = "AWAITING REVIEW"
    counts = life.prolific_study_sync(study=study, user=researcher)
    assert counts == {"RETURNED": 1, "AWAITING REVIEW": 1, "places_taken": 1}
    assert Assignment.objects.get(pk=held["PA"].pk).state == "expired"
    assert Assignment.objects.get(pk=held["PB"].pk).state == "active"
    assert Participant.objects.get(prolific_pid="PA").stage == "returned"
    a = Participant.objects.get(prolific_pid="PB").prolific_submissions.get()
    assert (a.status, a.source) == ("AWAITING REVIEW", "poll")
    # a second read changes nothing more
    life.prolific_study_sync(study=study, user=researcher)
    assert (
        Participant.objects.get(prolific_pid="PA").prolific_submissions.get().status == "RETURNED"
    )


# --- pages ---------------------------------------------------------------------------------


def page_text(response) -> str:
    return html.unescape(response.content.decode())


def test_researcher_reads_and_sees_no_button_that_changes_prolific(
    study, admin, researcher, client, prolific_server
):
    created(study, admin)
    client.force_login(researcher)
    page = page_text(client.get(reverse("annotation:prolific_study", args=[study.pk])))
    assert (
        "UNPUBLISHED" in page and 'id="publish-next"' not in page and 'id="hooks-link"' not in page
    )
    for name in ("prolific_publish", "prolific_transition", "prolific_places", "prolific_pilot"):
        assert client.post(reverse(f"annotation:{name}", args=[study.pk])).status_code == 403
    assert client.get(reverse("annotation:prolific_hooks")).status_code == 403
    n = len(prolific_server.requests)
    client.get(reverse("annotation:prolific_study", args=[study.pk]))
    assert len(prolific_server.requests) == n  # opening the page asks Prolific nothing


def test_admin_creates_from_the_page_and_publishing_needs_confirmation(
    study, admin, client, prolific_server
):
    client.force_login(admin)
    url = reverse("annotation:prolific_study", args=[study.pk])
    page = page_text(client.get(url))
    assert 'value="1.20"' in page and 'value="GEXCL"' in page
    form = {
        "name": "Label procedures",
        "description": "About 5 minutes.",
        "reward": "1.20",
        "minutes": "5",
        "places": "4",
        "devices": ["desktop"],
        "block_groups": "GEXCL",
    }
    bad = client.post(
        reverse("annotation:prolific_create", args=[study.pk]), {**form, "places": "four"}
    )
    assert bad.status_code == 400 and not prolific_server.studies  # at the field, typed kept
    assert 'id="create-places-error">Enter a whole number.' in bad.content.decode()
    assert 'value="four"' in bad.content.decode() and 'value="Label procedures"' in page_text(bad)
    # a control character is the gate's refusal at its field, not the bare 400 page
    nul = client.post(
        reverse("annotation:prolific_create", args=[study.pk]),
        {**form, "description": "About\x00 5 minutes."},
    )
    text = page_text(nul)
    assert nul.status_code == 400 and "This request was refused" not in text
    assert 'id="create-description-error">Description: contains a control character (U+0000' in (
        text
    )
    assert 'value="Label procedures"' in text and not prolific_server.studies
    done = client.post(reverse("annotation:prolific_create", args=[study.pk]), form, follow=True)
    assert "created as a draft" in page_text(done)
    (remote,) = prolific_server.studies.values()
    assert remote["external_study_url"].startswith(f"http://testserver/study/s/{study.slug}/?")
    confirm = client.post(
        reverse("annotation:prolific_publish", args=[study.pk]), {"pilot_places": "2"}
    )
    assert "Confirm: Publish 2 places (pilot)" in page_text(confirm)
    assert remote["status"] == "UNPUBLISHED"  # nothing yet
    client.post(
        reverse("annotation:prolific_publish", args=[study.pk]),
        {"pilot_places": "2", "confirm": "1"},
    )
    assert remote["status"] == "ACTIVE" and remote["total_available_places"] == 2


def test_returned_page(study, client):
    r = client.get(reverse("annotation:returned", args=[study.slug]))
    assert r.status_code == 200 and "Your place in this study has ended" in page_text(r)


def test_the_beat_task_polls_every_beat_without_webhooks_and_reconciles_with_them(
    study, admin, prolific_server, settings
):
    state = created(study, admin)
    life.prolific_study_publish(study=study, user=admin)
    sub = prolific_server.take_place(state.prolific_id, "PA")
    held = participant_current_assignment(participant=working_participant(study, "PA", session=sub))
    prolific_server.set_status(sub, "RETURNED")  # nobody subscribed: no delivery
    settings.PROLIFIC_WEBHOOK_URL = ""
    assert prolific_poll() == 1
    assert Assignment.objects.get(pk=held.pk).state == "expired"
    assert prolific_poll() == 1  # every beat
    polled = ProlificCall.objects.filter(action__in=["study_get", "list"])
    assert polled.count() == 4 and not polled.exclude(user=None).exists()
    settings.PROLIFIC_WEBHOOK_URL = "https://h2r.example/study/prolific/hook/"
    assert prolific_poll() == 0  # read a moment ago: reconciled again later
    settings.PROLIFIC_RECONCILE_SECONDS = 0
    assert prolific_poll() == 1


def test_bad_form_input_is_a_message_never_a_5xx(study, admin, client, prolific_server):
    created(study, admin)
    life.prolific_study_publish(study=study, user=admin, pilot_places=1)
    client.force_login(admin)
    posts = {
        "prolific_create": [{"reward": "x"}, {"reward": "1", "minutes": "1", "places": "1"}],
        "prolific_publish": [{"pilot_places": "-1"}, {"pilot_places": "1e3"}],
        "prolific_transition": [{"action": "EXPLODE"}, {}],
        "prolific_places": [{"places": "-3"}, {"places": "9" * 30}, {"places": ""}],
        "prolific_pilot": [
            {"minutes": "0", "reward": "1", "places": "1"},
            {"minutes": "5", "reward": "NaN", "places": "1"},
            {"minutes": "5", "reward": "1e400", "places": "1"},
        ],
    }
    for name, forms in posts.items():
        for form in forms:
            r = client.post(reverse(f"annotation:{name}", args=[study.pk]), form)
            # back with a message; the create and pilot boxes: shown again, refusals at fields
            expected = 400 if name in ("prolific_create", "prolific_pilot") else 302
            assert r.status_code == expected, (name, form, r.status_code)
    assert ProlificStudy.objects.get().total_places == 1


def test_a_control_character_in_a_number_box_is_shown_on_the_page(
    study, admin, client, prolific_server
):
    """Publish, pilot and add-places refuse a control character on the page, at
    the boxes (400), not with the door's bare page; nothing is sent to Prolific."""
    created(study, admin)
    client.force_login(admin)
    n = len(prolific_server.requests)
    for name, form in (
        ("prolific_publish", {"pilot_places": "2\x00"}),
        ("prolific_places", {"places": "3", "confirm": "1\x07"}),
        ("prolific_pilot", {"minutes": "5", "reward": "1\x00", "places": "1"}),
    ):
        r = client.post(reverse(f"annotation:{name}", args=[study.pk]), form)
        page = page_text(r)
        assert r.status_code == 400 and "This request was refused" not in page, name
        assert 'id="controls-error">' in page and "contains a control character" in page, name
    assert len(prolific_server.requests) == n
