"""Who a request of the annotator flow comes from: the study, the participant and, on an item's
requests, the assignment, looked up once per request by one function, :func:`annotator_for`.

A request says who it is (a :class:`Visitor`: the study's slug, the participant id of its
signed cookie, its account; no query). :func:`annotator_for` finds the participant it may act
as and returns one :class:`Annotator`, or raises :class:`Refused` (no participant, an
assignment that is not theirs) or :class:`NotHere` (the participant's stage is another page).
The flow's views turn those into pages (:func:`annotation.views.annotator.annotator_view`); a
submit's service calls it inside its own transaction, so the read that finds the assignment
also locks its row (:func:`annotation.services.submission.annotation_submit_posted`).

The ways in, in order: the signed cookie the entry set (the common case: one prepared query
for the participant, the study by its slug and, on an item's request, the assignment); else
the logged-in account's participant, in a study that accepts accounts. A Prolific link
(PROLIFIC_PID, SESSION_ID) is checked where it enters, once
(:func:`annotation.services.study.participant_enter_prolific`: a PID stays bound to the
SESSION_ID it entered with); the cookie set then names that participant, signed with
SECRET_KEY, for this study's pages only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import router

from annotation import prepared
from annotation.models import Assignment, Participant, Study
from annotation.selectors.flow import ASSIGNMENT_UNUSED_FIELDS
from core.prepared import model_instances

NO_SESSION_MESSAGE = (
    "We could not find your session. Please open the study again from the link on Prolific."
)
NOT_YOURS_MESSAGE = "This item is not yours."


@dataclass(frozen=True)
class Visitor:
    """What a request says about who sent it: the study's slug, the participant id of the
    study's signed cookie (None without one) and the request's user (an account or anonymous)."""

    slug: str
    participant_id: int | None
    user: Any


@dataclass(frozen=True)
class Annotator:
    """The request's study and participant and, on an item's request, the assignment (with its
    item, generation and procedure)."""

    study: Study
    participant: Participant
    assignment: Assignment | None = None


class Refused(Exception):
    """Why this request gets no page of the flow; ``reason`` picks the page and its status."""

    def __init__(self, reason: str, message: str, *, study: Study | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.study = study


class NotHere(Exception):
    """The participant's stage is another page of the flow than the one asked for."""

    def __init__(self, annotator: Annotator) -> None:
        super().__init__(annotator.participant.stage)
        self.annotator = annotator


def annotator_for(
    visitor: Visitor,
    *,
    stages: Iterable[str] = (),
    assignment_id: int | None = None,
    lock: bool = False,
    with_assignment_state: bool = False,
) -> Annotator:
    """The visitor's study, participant and (``assignment_id``) their assignment: only their
    own. ``stages``: the stages this page is for (NotHere otherwise; an item's request has no
    stage check). ``lock``: the assignment's row locked until the caller's transaction ends,
    by the same read. ``with_assignment_state``: the participant read with which assignment is
    open and whether any was returned to the pool (the item page's claim needs no further read).
    Raises Refused, NotHere, or Study.DoesNotExist (no study has this slug)."""
    if assignment_id is not None:
        assignment = assignment_for_cookie(
            slug=visitor.slug,
            participant_id=visitor.participant_id,
            assignment_id=assignment_id,
            lock=lock,
        )
        if assignment is not None:  # the common case: one query for all a save needs
            return Annotator(assignment.participant.study, assignment.participant, assignment)
    participant = _participant(visitor, with_assignment_state and assignment_id is None)
    annotator = Annotator(participant.study, participant)
    if assignment_id is not None:
        assignment = assignment_for_participant(
            participant=participant, assignment_id=assignment_id, lock=lock
        )
        if assignment is None:
            raise Refused("no_session", NOT_YOURS_MESSAGE, study=participant.study)
        return Annotator(participant.study, participant, assignment)
    stages = tuple(stages)
    if stages and participant.stage not in stages:
        raise NotHere(annotator)
    return annotator


def _participant(visitor: Visitor, with_assignment_state: bool) -> Participant:
    """The signed cookie's participant in the slug's study, else the account's."""
    participant = participant_for_slug(
        slug=visitor.slug,
        participant_id=visitor.participant_id,
        with_assignment_state=with_assignment_state,
    )
    if participant is not None:  # one query for the participant and the study
        return participant
    study = Study.objects.get(slug=visitor.slug)
    if study.accepts_accounts:
        participant = participant_for_user(study=study, user=visitor.user)
    if participant is None:
        raise Refused("no_session", NO_SESSION_MESSAGE, study=study)
    return participant


# --- the lookups ------------------------------------------------------------------------------


def participant_for_slug(
    *, slug: str, participant_id: int | None, with_assignment_state: bool = False
) -> Participant | None:
    """The participant and their study in one query. With ``with_assignment_state`` the same
    query also says which assignment is open (``open_assignment_id``) and whether any was
    returned to the pool (``has_expired``), so the item page needs no further read to decide."""
    if not participant_id:
        return None
    if not with_assignment_state:
        return (
            Participant.objects.select_related("study")
            .filter(pk=participant_id, study__slug=slug)
            .first()
        )
    rows = prepared.PARTICIPANT_STATE.rows(participant_id=participant_id, slug=slug)
    if not rows:
        return None
    row = rows[0]
    alias = router.db_for_read(Participant)
    participant, study = model_instances(alias, row, prepared.PARTICIPANT_STATE_PARTS)
    participant.study = study
    participant.open_assignment_id, participant.has_expired = row[-2], bool(row[-1])
    return participant


def participant_for_user(*, study: Study, user) -> Participant | None:
    """The account's one participant in the study (the entry's and every later request's)."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Participant.objects.select_related("study").filter(study=study, user=user).first()


def assignment_for_participant(
    *, participant: Participant, assignment_id: int, lock: bool = False
) -> Assignment | None:
    """Only the participant's own assignment; None for anyone else's. ``lock``: its row locked
    until the caller's transaction ends."""
    assignments = (
        Assignment.objects.select_related("item__generation__procedure")
        .defer(*ASSIGNMENT_UNUSED_FIELDS)
        .filter(pk=assignment_id, participant=participant)
    )
    if lock:
        assignments = assignments.select_for_update(of=("self",))
    assignment = assignments.first()
    if assignment is not None:
        assignment.participant = participant  # already loaded, with its study
    return assignment


def assignment_for_cookie(
    *, slug: str, participant_id: int | None, assignment_id: int, lock: bool = False
) -> Assignment | None:
    """One query for a save, draft or heartbeat: the assignment with its participant, study,
    item, generation and procedure, and whether a draft exists; only if it belongs to the
    participant of the signed cookie in this study. None otherwise (:func:`annotator_for` then
    looks the participant up the long way, for its refusal or an account's entry). ``lock``:
    the assignment's row locked until the caller's transaction ends."""
    if not participant_id:
        return None
    statement = prepared.ASSIGNMENT_FULL_LOCKED if lock else prepared.ASSIGNMENT_FULL
    rows = statement.rows(assignment_id=assignment_id, participant_id=participant_id, slug=slug)
    if not rows:
        return None
    row = rows[0]
    alias = router.db_for_read(Assignment)
    assignment, participant, study, item, generation, procedure = model_instances(
        alias, row, prepared.ASSIGNMENT_FULL_PARTS
    )
    participant.study = study
    generation.procedure = procedure
    item.generation = generation
    assignment.participant = participant
    assignment.item = item
    assignment.has_draft = bool(row[-1])
    return assignment
