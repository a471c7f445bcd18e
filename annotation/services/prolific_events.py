"""Applying Prolific's submission and study status changes: one home for both paths, the
signed webhooks (:mod:`annotation.services.prolific_hooks` receives, a task applies) and the
beat task's poll (:func:`annotation.services.prolific_study.prolific_study_sync`).

A submission that becomes RETURNED or TIMED-OUT frees its participant's assigned
items at once (:func:`annotation.services.assignment.participant_assignments_release`, the
same freeing as the idle timer's) and ends a session still in progress (stage "returned"), so
the next participant gets those items. Other statuses (AWAITING REVIEW, APPROVED …) are
recorded on the participant's :class:`~annotation.models.ProlificSubmission` (REJECTED too:
Prolific keeps a rejected submission's place taken, so its items stay with it). A status older
than the one recorded (events are not delivered in order) changes nothing; applying the same
status twice changes nothing either. An accepted webhook delivery is applied once, by its task
(:func:`delivery_apply`)."""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import (
    Participant,
    ProlificDelivery,
    ProlificStudy,
    ProlificSubmission,
    Study,
)
from annotation.prolific import rules
from annotation.services.assignment import participant_assignments_release

Stage = Participant.Stage
FINAL_STAGES = (Stage.DONE, Stage.SCREENED_OUT, Stage.DECLINED, Stage.RETURNED)


def _participant_for(submission_id: str, prolific_pid: str, study: Study | None):
    """The participant who entered with this SESSION_ID (Prolific's submission id), else the
    study's participant with this Prolific id."""
    found = Participant.objects.filter(prolific_session_id=submission_id).first()
    if found is None and study is not None and prolific_pid:
        found = Participant.objects.filter(study=study, prolific_pid=prolific_pid).first()
    return found


def _locked_submission(submission_id: str, defaults: dict) -> tuple[ProlificSubmission, bool]:
    """The row locked for this transaction, created when new (a concurrent delivery for the
    same submission waits for this one)."""
    row = ProlificSubmission.objects.select_for_update().filter(submission_id=submission_id).first()
    if row is not None:
        return row, False
    try:
        with transaction.atomic():
            return ProlificSubmission.objects.create(submission_id=submission_id, **defaults), True
    except IntegrityError:
        return ProlificSubmission.objects.select_for_update().get(
            submission_id=submission_id
        ), False


def submission_status_apply(
    *,
    submission_id: str,
    status: str,
    at: datetime,
    source: str,
    prolific_pid: str = "",
    study: Study | None = None,
) -> str:
    """Record ``status`` for the submission as of ``at``; free the participant's items when
    the place ended. Returns what it did, in words (kept on the delivery)."""
    status = (status or "").strip().upper()
    if status not in rules.SUBMISSION_STATUSES:
        return f"status {status or '(none)'} is not a submission status followed here; ignored"
    participant = _participant_for(submission_id, prolific_pid, study)
    study = study or (participant.study if participant else None)
    if study is None:
        return f"submission {submission_id}: nobody entered this app with it; ignored"
    with transaction.atomic():
        row, created = _locked_submission(
            submission_id,
            {
                "study": study,
                "participant": participant,
                "prolific_pid": prolific_pid or (participant.prolific_pid if participant else ""),
                "status": status,
                "status_at": at,
                "source": source,
            },
        )
        if not created:
            if at < row.status_at:
                return f"{status} is older than the recorded {row.status}; ignored"
            if row.status == status:
                return f"already {status}; nothing changed"
            row.status, row.status_at, row.source = status, at, source
            row.participant = row.participant or participant
        outcome = f"recorded {status}"
        if status in rules.FREEING and row.participant is not None and row.freed_at is None:
            outcome += "; " + _end_place(row.participant)
            row.freed_at = timezone.now()
        row.save()
    return outcome


def _end_place(participant: Participant) -> str:
    freed = participant_assignments_release(participant=participant)
    locked = Participant.objects.select_for_update().get(pk=participant.pk)
    if locked.stage not in FINAL_STAGES:
        locked.stage = Stage.RETURNED
        locked.finished_at = timezone.now()
        locked.save(update_fields=["stage", "finished_at"])
        return f"{freed} item(s) freed, session ended"
    return f"{freed} item(s) freed"


def study_status_apply(*, prolific_id: str, status: str, at: datetime, source: str) -> str:
    """Record Prolific's status of a study this app created (an older one is ignored). The
    app's own open/paused/closed status is the researcher's: a pause on Prolific stops new
    places only, so participants in progress finish their items."""
    status = (status or "").strip().upper()
    if status not in rules.STUDY_STATUSES:
        return f"study status {status or '(none)'} is not followed here; ignored"
    with transaction.atomic():
        row = ProlificStudy.objects.select_for_update().filter(prolific_id=prolific_id).first()
        if row is None:
            return f"study {prolific_id} was not created from this app; ignored"
        if row.status_at and at < row.status_at:
            return f"{status} is older than the recorded {row.status}; ignored"
        if row.status == status:
            row.status_at = at
            row.save(update_fields=["status_at"])
            return f"already {status}; nothing changed"
        row.status, row.status_at = status, at
        row.save(update_fields=["status", "status_at"])
    return f"study {prolific_id} is {status}"


def delivery_apply(*, delivery_id: int) -> str:
    """Apply an accepted delivery once (a second run finds it applied)."""
    with transaction.atomic():
        delivery = (
            ProlificDelivery.objects.select_for_update()
            .filter(pk=delivery_id, accepted=True)
            .first()
        )
        if delivery is None or delivery.applied_at is not None:
            return "nothing to apply"
        at = delivery.sent_at or delivery.received_at
        if delivery.event_type == "submission.status.change":
            outcome = submission_status_apply(
                submission_id=delivery.resource_id, status=delivery.status, at=at, source="webhook"
            )
        elif delivery.event_type == "study.status.change":
            outcome = study_status_apply(
                prolific_id=delivery.resource_id, status=delivery.status, at=at, source="webhook"
            )
        else:
            outcome = f"event type {delivery.event_type} is not followed here"
        delivery.outcome = outcome[:300]
        delivery.applied_at = timezone.now()
        delivery.save(update_fields=["outcome", "applied_at"])
    return outcome
