"""The study rules, enforced by the services, on the configured database (PostgreSQL in CI)."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import (
    Annotation,
    Assignment,
    AttentionCheckResult,
    Draft,
    Participant,
    StudyItem,
)
from annotation.selectors.flow import (
    EXPORT_FIELDS,
    study_export_rows,
    study_label_rows,
    study_progress,
)
from annotation.services import study as study_services
from annotation.services.assignment import assignments_release_stale, participant_current_assignment
from annotation.services.flow import participant_consent, participant_finish_training
from annotation.services.submission import (
    SubmissionRefused,
    annotation_submit,
    assignment_heartbeat,
    draft_save,
)
from tests.annotation.factories import full_label, make_study, prolific, working_participant

pytestmark = pytest.mark.django_db


def next_item(p):
    return participant_current_assignment(participant=p)


def submit(a, **kw):
    return annotation_submit(assignment=a, label=full_label(**kw))


# --- entry ---------------------------------------------------------------------------


def test_prolific_entry_creates_then_resumes_same_participant():
    study = make_study()
    p1 = study_services.participant_enter_prolific(study=study, params=prolific("PID_A"))
    p2 = study_services.participant_enter_prolific(study=study, params=prolific("PID_A"))
    assert p1.pk == p2.pk and Participant.objects.count() == 1
    # another SESSION_ID for the same PID is refused (tests/annotation/test_entry_binding.py)
    with pytest.raises(study_services.EntryRefused):
        study_services.participant_enter_prolific(
            study=study, params=prolific("PID_A", session="OTHER")
        )
    assert Participant.objects.get().prolific_session_id == "SESS1"


@pytest.mark.parametrize(
    "params,needle",
    [
        ({"STUDY_ID": "S", "SESSION_ID": "X"}, "PROLIFIC_PID is missing"),
        ({"PROLIFIC_PID": "a b<", "STUDY_ID": "S", "SESSION_ID": "X"}, "PROLIFIC_PID is malformed"),
        ({"PROLIFIC_PID": "A", "STUDY_ID": "WRONG", "SESSION_ID": "X"}, "STUDY_ID does not match"),
    ],
)
def test_bad_prolific_links_are_refused_with_reason(params, needle):
    study = make_study(prolific_study_id="S")
    with pytest.raises(study_services.EntryRefused) as exc:
        study_services.participant_enter_prolific(study=study, params=params)
    assert exc.value.reason == "bad_link" and needle in exc.value.message
    assert Participant.objects.count() == 0


def test_closed_paused_and_full_studies_refuse_new_participants():
    study = make_study(n_items=1, overlap=1, status="closed")
    with pytest.raises(study_services.EntryRefused) as exc:
        study_services.participant_enter_prolific(study=study, params=prolific("A"))
    assert exc.value.reason == "closed"
    study_services.study_set_status(study=study, status="paused")
    with pytest.raises(study_services.EntryRefused) as exc:
        study_services.participant_enter_prolific(study=study, params=prolific("A"))
    assert exc.value.reason == "paused"
    study_services.study_set_status(study=study, status="open")
    a = next_item(working_participant(study, "A"))
    assert a is not None
    with pytest.raises(study_services.EntryRefused) as exc:
        study_services.participant_enter_prolific(study=study, params=prolific("B"))
    assert exc.value.reason == "full"


def test_account_entry(make_user):
    study = make_study(entry="account")
    user = make_user("ann1", role="annotator")
    p = study_services.participant_enter_account(study=study, user=user)
    assert study_services.participant_enter_account(study=study, user=user).pk == p.pk
    with pytest.raises(study_services.EntryRefused):
        study_services.participant_enter_prolific(study=study, params=prolific("A"))


# --- assignment ----------------------------------------------------------------------


def test_least_annotated_first_never_twice_and_capped_at_k():
    study = make_study(n_items=3, overlap=2, items_per_participant=10)
    seen = {}
    for pid in ("A", "B"):
        p = working_participant(study, pid)
        items = []
        while (a := next_item(p)) is not None:
            items.append(a.item_id)
            submit(a)
        seen[pid] = items
    assert len(set(seen["A"])) == len(seen["A"]) == 3  # never the same item twice
    assert len(seen["B"]) == 3  # 3 items x k=2 = 6 slots
    counts = {i.pk: i.annotations.count() for i in StudyItem.objects.filter(study=study)}
    assert set(counts.values()) == {2}
    with pytest.raises(study_services.EntryRefused):  # a third annotator finds the study full
        working_participant(study, "C")


def test_least_annotated_item_is_served_first():
    study = make_study(n_items=3, overlap=3)
    first = next_item(working_participant(study, "A"))
    second = next_item(working_participant(study, "B"))
    third = next_item(working_participant(study, "C"))
    assert len({first.item_id, second.item_id, third.item_id}) == 3


def test_refresh_returns_same_assignment_and_quota_ends_session():
    study = make_study(n_items=5, items_per_participant=2)
    p = working_participant(study, "A")
    a = next_item(p)
    assert next_item(p).pk == a.pk
    submit(a)
    submit(next_item(p))
    assert next_item(p) is None
    p.refresh_from_db()
    assert p.stage == Participant.Stage.DONE and p.n_done == 2


def test_idle_assignment_returns_to_pool_and_owner_can_resume_it(settings):
    settings.ANNOTATION_SWEEP_SECONDS = 0
    study = make_study(n_items=1, overlap=1, assignment_timeout_minutes=5)
    pa, pb = working_participant(study, "A"), working_participant(study, "B")
    a = next_item(pa)
    assert next_item(pb) is None  # item is taken (k=1)
    Participant.objects.filter(pk=pb.pk).update(stage=Participant.Stage.WORKING)
    Assignment.objects.filter(pk=a.pk).update(last_seen_at=timezone.now() - timedelta(minutes=6))
    b = next_item(Participant.objects.get(pk=pb.pk))
    assert b is not None and b.item_id == a.item_id
    a.refresh_from_db()
    assert a.state == Assignment.State.EXPIRED
    assert StudyItem.objects.get(pk=a.item_id).n_assigned == 1
    # A comes back: the item is full now, so A's late submit is refused, not stored past k.
    a = Assignment.objects.select_related("item__generation", "participant__study").get(pk=a.pk)
    with pytest.raises(SubmissionRefused):
        submit(a)
    assert Annotation.objects.count() == 0


def test_assignment_unique_per_participant_item_constraint():
    study = make_study(n_items=1)
    p = working_participant(study, "A")
    a = next_item(p)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            participant=p, item=a.item, served_at=a.served_at, last_seen_at=a.served_at
        )


# --- submission ----------------------------------------------------------------------


def test_minimum_time_enforced_by_server():
    study = make_study(min_seconds_per_item=90)
    p = working_participant(study, "A")
    a = next_item(p)
    with pytest.raises(SubmissionRefused) as exc:
        submit(a)
    assert "at least 90 s" in exc.value.messages[0]
    assert Annotation.objects.count() == 0
    # a refused submit writes nothing (one transaction per submit); the page keeps what was typed
    assert not Draft.objects.filter(assignment=a).exists()
    late = a.served_at + timedelta(seconds=91)
    res = annotation_submit(assignment=a, label=full_label(), now=late)
    assert res.created and res.annotation.wall_ms == 91_000


def test_too_early_says_at_least_one_second_left_until_the_minimum():
    """One rounding (annotation.rules.seconds_left): whole seconds up, never "0 s left" while
    the submission is still refused, and open exactly at the minimum."""
    study = make_study(min_seconds_per_item=90)
    p = working_participant(study, "A")
    a = next_item(p)
    with pytest.raises(SubmissionRefused) as exc:
        annotation_submit(
            assignment=a,
            label=full_label(),
            now=a.served_at + timedelta(seconds=89, microseconds=999_600),
        )
    assert "(1 s left)" in exc.value.messages[0]
    with pytest.raises(SubmissionRefused) as exc:
        annotation_submit(
            assignment=a, label=full_label(), now=a.served_at + timedelta(seconds=0.4)
        )
    assert "(90 s left)" in exc.value.messages[0]
    res = annotation_submit(
        assignment=a, label=full_label(), now=a.served_at + timedelta(seconds=90)
    )
    assert res.created


def test_incomplete_interface_refused_and_nothing_written():
    study = make_study()
    a = next_item(working_participant(study, "A"))
    label = full_label()
    label.read_steps = [1, 2]
    with pytest.raises(SubmissionRefused) as exc:
        annotation_submit(assignment=a, label=label)
    assert any("L2 steps" in m for m in exc.value.messages)
    # a refused submit leaves no row behind: no check result, no draft
    assert not AttentionCheckResult.objects.exists() and not Draft.objects.exists()


def test_double_submit_stores_one_annotation():
    study = make_study()
    a = next_item(working_participant(study, "A"))
    r1 = submit(a, has_failure=True)
    r2 = submit(a, has_failure=False)
    assert r1.created and not r2.created and r2.annotation.pk == r1.annotation.pk
    assert Annotation.objects.count() == 1 and Annotation.objects.get().has_failure is True
    with pytest.raises(IntegrityError), transaction.atomic():
        Annotation.objects.create(
            assignment=a,
            participant=a.participant,
            item=a.item,
            has_failure=False,
            wall_ms=1,
            active_ms=1,
            submitted_at=timezone.now(),
        )


def test_draft_autosave_restores_and_is_ignored_after_submit():
    study = make_study()
    a = next_item(working_participant(study, "A"))
    label = full_label(has_failure=True, comments="half done")
    assert draft_save(assignment=a, label=label)
    assert Draft.objects.get(assignment=a).data["comments"] == "half done"
    submit(a)
    a.refresh_from_db()
    assert not draft_save(assignment=a, label=label)
    assert not Draft.objects.filter(assignment=a).exists()


def test_active_time_from_heartbeats_is_clamped():
    study = make_study()
    a = next_item(working_participant(study, "A"))
    t = a.served_at
    assignment_heartbeat(assignment=a, active_ms=10_000, now=t + timedelta(seconds=15))
    assignment_heartbeat(
        assignment=a, active_ms=999_999, now=t + timedelta(seconds=30)
    )  # capped at 30 s
    assignment_heartbeat(
        assignment=a, active_ms=0, now=t + timedelta(seconds=45)
    )  # idle / hidden tab
    a.refresh_from_db()
    assert a.active_ms == 30_000  # 10 s + min(999 s, 2 beats = 30 s), clamped to wall time 30 s
    res = annotation_submit(
        assignment=a, label=full_label(), active_ms=5_000, now=t + timedelta(seconds=60)
    )
    assert res.annotation.wall_ms == 60_000 and res.annotation.active_ms == 35_000


# --- attention, qualification --------------------------------------------------------


def test_planted_attention_checks_warn_then_screen_out():
    study = make_study(
        n_items=10,
        n_attention=3,
        attention_rate=0.5,
        attention_warn_after=1,
        attention_screen_after=2,
        items_per_participant=10,
    )
    p = working_participant(study, "A")
    kinds = []
    notices = []
    while (a := next_item(p)) is not None:
        kinds.append(a.item.kind)
        res = submit(a, has_failure=False)  # planted items expect a failure: each one is missed
        notices += res.notices
    assert kinds == ["regular", "regular", "attention", "regular", "regular", "attention"]
    p.refresh_from_db()
    assert p.stage == Participant.Stage.SCREENED_OUT and p.attention_failures == 2
    assert len(notices) == 1 and "missed 1 attention check" in notices[0]
    results = list(
        AttentionCheckResult.objects.filter(kind="planted").values_list("passed", flat=True)
    )
    assert results == [False, False]


def test_passing_attention_checks_are_recorded_and_do_not_count():
    study = make_study(n_items=4, n_attention=2, attention_rate=0.5, items_per_participant=4)
    p = working_participant(study, "A")
    while (a := next_item(p)) is not None:
        submit(a, has_failure=a.item.kind == "attention")
    p.refresh_from_db()
    assert p.stage == "done" and p.n_done == 4 and p.attention_failures == 0
    # the second planted check would come after item 4, but the quota ends the session first
    assert AttentionCheckResult.objects.filter(kind="planted", passed=True).count() == 1


@pytest.mark.parametrize(
    "answers,stage", [((True, True, False), "working"), ((True, False, False), "screened_out")]
)
def test_qualification_pass_and_fail(answers, stage):
    study = make_study(n_qualification=3, qualification_pass_threshold=0.6)
    p = study_services.participant_enter_prolific(study=study, params=prolific("Q"))
    participant_consent(participant=p, agree=True)
    participant_finish_training(participant=p)
    p.refresh_from_db()
    assert p.stage == "qualification"
    for answer in answers:
        a = next_item(p)
        assert a.item.kind == "qualification"
        submit(a, has_failure=answer)  # expected: True
    nxt = next_item(p)
    p.refresh_from_db()
    assert p.stage == stage
    assert (nxt is not None) == (stage == "working")
    assert p.qualification_score == pytest.approx(sum(answers) / 3)


def test_declining_consent_ends_session():
    study = make_study()
    p = study_services.participant_enter_prolific(study=study, params=prolific("D"))
    participant_consent(participant=p, agree=False)
    p.refresh_from_db()
    assert p.stage == "declined" and next_item(p) is None


# --- selectors -----------------------------------------------------------------------


def test_progress_label_rows_and_export():
    study = make_study(n_items=2, overlap=2, n_attention=1, attention_rate=0.5)
    for pid in ("A", "B"):
        p = working_participant(study, pid)
        while (a := next_item(p)) is not None:
            submit(
                a,
                has_failure=(pid == "A"),
                failures=[{"description": "d", "l1_steps": [1], "l2_steps": [3, 2]}]
                if pid == "A"
                else None,
            )
    prog = study_progress(study=study)
    assert prog["items_complete"] == 2 and prog["n_annotations"] == 4 and prog["percent"] == 100.0
    assert prog["checks"]["planted_total"] == 2 and prog["checks"]["planted_failed"] == 1
    rows = study_label_rows(study=study)
    assert len(rows) == 4
    assert {(r[1], r[2], r[3]) for r in rows} == {("A", True, 2), ("B", False, None)}
    export = list(study_export_rows(study=study))
    assert len(export) == 6
    att = [r for r in export if r["item_kind"] == "attention"]
    assert {r["prolific_pid"]: r["attention_passed"] for r in att} == {"A": True, "B": False}
    reg = next(r for r in export if r["item_kind"] == "regular" and r["prolific_pid"] == "A")
    assert (
        reg["failures"][0]["l2_steps"] == [3, 2]
        and reg["first_failure_l2_step"] == 2
        and reg["wall_ms"] >= 0
    )


def test_export_rows_carry_each_stored_annotation_as_read_from_its_models():
    study = make_study(n_items=2, overlap=2, n_attention=1, attention_rate=0.5)
    for pid in ("A", "B"):
        p = working_participant(study, pid)
        while (a := next_item(p)) is not None:
            submit(a, has_failure=(pid == "B"))
    rows = list(study_export_rows(study=study))
    stored = Annotation.objects.filter(item__study=study).select_related(
        "participant", "assignment", "item__generation__procedure", "item__generation__generator"
    )
    assert len(rows) == stored.count() == 6
    assert all(tuple(r) == EXPORT_FIELDS for r in rows)
    by_key = {(r["item_id"], r["participant_id"]): r for r in rows}
    for a in stored:
        row = by_key[(a.item_id, a.participant_id)]
        assert row["source_example_id"] == a.item.generation.procedure.source_example_id
        assert row["generator"] == a.item.generation.generator.name
        assert row["prolific_pid"] == a.participant.prolific_pid and row["username"] == ""
        assert row["served_at"] == a.assignment.served_at.isoformat()
        assert row["submitted_at"] == a.submitted_at.isoformat()
        assert row["n_failures"] == len(a.failures) and row["has_failure"] == a.has_failure
        assert row["participant_stage"] == a.participant.stage
        assert row["expected_has_failure"] == a.item.expected_has_failure


def test_database_allows_one_active_assignment_per_participant():
    study = make_study(n_items=2)
    p = working_participant(study, "A")
    a = next_item(p)
    other = StudyItem.objects.filter(study=study, kind="regular").exclude(pk=a.item_id).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            participant=p, item=other, served_at=a.served_at, last_seen_at=a.served_at
        )


def test_qualification_item_returned_to_pool_is_resumed_not_skipped():
    study = make_study(n_items=2, n_qualification=2, assignment_timeout_minutes=1)
    q = study_services.participant_enter_prolific(study=study, params=prolific("QQ"))
    participant_consent(participant=q, agree=True)
    participant_finish_training(participant=q)
    q.refresh_from_db()
    first = next_item(q)
    Assignment.objects.filter(pk=first.pk).update(
        last_seen_at=timezone.now() - timedelta(minutes=5)
    )
    assert assignments_release_stale(study=study) == 1
    assert Assignment.objects.get(pk=first.pk).state == Assignment.State.EXPIRED
    again = next_item(q)
    assert again.pk == first.pk and again.state == Assignment.State.ACTIVE
