"""Writes of an item's answer: drafts (autosave), heartbeats (active time) and the submission,
stored once, with the attention and qualification results it implies.

Each write opens its own transaction and takes its own row locks (the assignment's row first,
then the draft: an autosave and its item's submit queue instead of deadlocking). A submit from
the item page (:func:`annotation_submit_posted`) finds the participant's assignment inside that
transaction, by the read that locks it: one read, one lookup of the participant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.db import router, transaction
from django.utils import timezone

from annotation import conf, prepared, prepared_cte, rules
from annotation.form_types.base import BoundForm, ItemView
from annotation.form_types.registry import get_form_type
from annotation.labels import (
    MAX_COMMENTS,
    MAX_DESCRIPTION,
    ParsedLabel,
    cleaned_failures,
    form_submission_errors,
    parse_form,
)
from annotation.models import (
    Annotation,
    Assignment,
    AttentionCheckResult,
    Draft,
    Participant,
    Study,
    StudyItem,
)
from annotation.selectors.annotator import Visitor, annotator_for
from annotation.selectors.forms import item_view, known_answer_result, study_form
from annotation.services.assignment import item_take_slot
from annotation.services.flow import participant_finish
from annotation.signals import labels_arrived_on_commit
from core.text import typed_text_error

Kind = StudyItem.Kind
Stage = Participant.Stage


class SubmissionRefused(Exception):
    def __init__(
        self, messages: list[str], *, item_gone: bool = False, fields: dict | None = None
    ) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
        self.item_gone = item_gone
        self.fields = fields or {}  # the page's field -> its refusal (label_text_problems)
        self.label: ParsedLabel | None = None  # what was typed (a posted submit's)


def _active_ms(assignment: Assignment, delta_ms: int, now: datetime) -> int:
    return rules.active_ms_after_beat(
        active_ms=assignment.active_ms,
        delta_ms=delta_ms,
        wall_ms=rules.wall_ms(served_at=assignment.served_at, now=now),
        heartbeat_seconds=conf.heartbeat_seconds(),
    )


def assignment_heartbeat(
    *, assignment: Assignment, active_ms: int, now: datetime | None = None
) -> Assignment:
    """Record that the page is open; ``active_ms``: active time since the page's last beat."""
    now = now or timezone.now()
    if assignment.state != Assignment.State.ACTIVE:
        return assignment
    assignment.active_ms = _active_ms(assignment, active_ms, now)
    assignment.last_seen_at = now
    Assignment.objects.filter(pk=assignment.pk, state=Assignment.State.ACTIVE).update(
        active_ms=assignment.active_ms, last_seen_at=now
    )
    return assignment


def label_text_problems(label: ParsedLabel) -> list[tuple[str, str]]:
    """The free-text fields of an answer through the one text gate (core.text) and their
    length limits: (the page's field, refusal naming the field) for each refused one. The
    page's field is ``comments``, ``failure-<n>`` (the n-th failure's description) or the
    form type's field in lower case (``answer``)."""
    fields = [("comments", "Comments", label.comments, MAX_COMMENTS)] + [
        (f"failure-{i}", f"Failure {i} description", f.get("description", ""), MAX_DESCRIPTION)
        for i, f in enumerate(label.failures, start=1)
    ]
    if label.form_type != "critical_failure":  # another form type's free text (its answer)
        form_type = get_form_type(label.form_type)
        fields += [
            (name.lower(), name, value, form_type.text_limit(name))
            for name, value in form_type.text_fields(label.answer)
        ]
    return [
        (key, message)
        for key, name, value, limit in fields
        if (message := typed_text_error(value, name, limit))
    ]


def draft_save(
    *, assignment: Assignment, label: ParsedLabel, active_ms: int = 0, now: datetime | None = None
) -> bool:
    """Autosave; ignored (returns False) once the assignment is submitted. Refuses
    (SubmissionRefused) text the gate refuses, saving nothing."""
    now = now or timezone.now()
    if assignment.state == Assignment.State.SUBMITTED:
        return False
    problems = label_text_problems(label)
    if problems:
        raise SubmissionRefused([m for _, m in problems], fields=dict(problems))
    with transaction.atomic():
        # the assignment's row first, as a submit takes it (then deletes the draft): the other
        # order deadlocked an autosave against its own item's submit (a 500)
        if _assignment_locked(assignment.pk).state == Assignment.State.SUBMITTED:
            return False  # submitted meanwhile: no draft left behind
        Draft.objects.update_or_create(
            assignment=assignment, defaults={"data": label.as_draft(), "updated_at": now}
        )
        assignment_heartbeat(assignment=assignment, active_ms=active_ms, now=now)
    return True


@dataclass
class SubmitResult:
    """A submit's outcome: the stored annotation (``created`` False: stored before, by another
    tab), the notices to show, the label as posted and the participant's stage after it."""

    annotation: Annotation
    created: bool
    notices: list[str] = field(default_factory=list)
    label: ParsedLabel | None = None
    stage: str = ""


def _assignment_locked(pk: int) -> Assignment:
    """The assignment's row, locked until the transaction ends (a prepared read)."""
    rows = prepared.ASSIGNMENT_LOCKED.rows(pk=pk)
    if not rows:
        raise Assignment.DoesNotExist(f"assignment {pk}")
    alias = router.db_for_write(Assignment)
    return Assignment.from_db(alias, prepared.ASSIGNMENT_FIELDS, rows[0])


def _refuse_unready(
    assignment: Assignment,
    study: Study,
    label: ParsedLabel,
    now: datetime,
    form: BoundForm,
    view: ItemView,
) -> None:
    """Refuse (SubmissionRefused) text the gate refuses and an early or incomplete submission.
    A refused submit writes nothing (the page keeps what was typed)."""
    refused_text = label_text_problems(label)
    problems: list[str] = [message for _, message in refused_text]
    waited = rules.waited_seconds(served_at=assignment.served_at, now=now)
    left = rules.seconds_left(min_seconds=study.min_seconds_per_item, waited=waited)
    if left:
        problems.append(rules.too_early_message(min_seconds=study.min_seconds_per_item, left=left))
    n_l1 = rules.l1_steps_to_read(
        click_through_l1=study.click_through_l1,
        n_l1=len(assignment.item.generation.procedure.steps),
    )
    problems.extend(form_submission_errors(label, form=form, item=view, n_l1=n_l1))
    if problems:
        raise SubmissionRefused(problems, fields=dict(refused_text))


def _store(
    locked: Assignment,
    item: StudyItem,
    label: ParsedLabel,
    active_ms: int,
    now: datetime,
    form: BoundForm,
    view: ItemView,
) -> Annotation:
    """The annotation row, the assignment marked submitted with its times, its draft removed
    and, for a regular item, the participant's count of items done raised (on PostgreSQL in
    one statement: :data:`annotation.prepared_cte.SUBMIT`)."""
    n_l2 = len(item.generation.predicted_steps)
    active = _active_ms(locked, active_ms, now)
    wall_ms = rules.wall_ms(served_at=locked.served_at, now=now)
    has_failure, failures, answer = bool(label.has_failure), cleaned_failures(label), {}
    if label.form_type != "critical_failure":  # another form type: its (scored) answer
        answer = form.type.finalize(label.answer, config=form.config, item=view)
        has_failure, failures = form.type.has_failure(answer, config=form.config), []
    annotation = Annotation(
        assignment=locked,
        participant_id=locked.participant_id,
        item=item,
        has_failure=has_failure,
        failures=failures,
        label=answer,
        comments=label.comments.strip(),
        wall_ms=wall_ms,
        active_ms=min(active, wall_ms),
        interface_checks={
            "goal_ack": label.goal_ack,
            "steps_read": len(label.read_steps),
            "n_steps": n_l2,
            "l1_steps_read": len(label.read_l1_steps),
        },
        submitted_at=now,
    )
    mark = {"pk": locked.pk, "now": now, "active_ms": active}
    if prepared_cte.available():  # one statement: the annotation, the assignment, the draft,
        statement = prepared_cte.SUBMIT if item.kind == Kind.REGULAR else prepared_cte.SUBMIT_KNOWN
        values = {f.attname: getattr(annotation, f.attname) for f in prepared.NEW_ANNOTATION.fields}
        annotation.pk = statement.run(annotation=values, mark=mark)  # and the count (regular)
        annotation._state.adding = False
        annotation._state.db = router.db_for_write(Annotation)
        return annotation
    prepared.NEW_ANNOTATION.insert(annotation)
    prepared.MARK_SUBMITTED.run(**mark)
    if getattr(locked, "has_draft", True):  # read with the assignment when known
        Draft.objects.filter(assignment_id=locked.pk).delete()
    if item.kind == Kind.REGULAR:
        prepared.COUNT_DONE.run(pk=locked.participant_id)
    return annotation


def _record_known_answer(
    locked: Assignment, item: StudyItem, study: Study, annotation: Annotation, form: BoundForm
) -> tuple[list[str], str]:
    """An attention or qualification item's result; a missed attention check counts towards
    a warning (returned as a notice) or screening out. Returns the notices and the
    participant's stage after it."""
    participant = (
        Participant.objects.select_for_update(of=("self",))
        .select_related("study")
        .get(pk=locked.participant_id)
    )
    passed, detail = known_answer_result(study=study, item=item, annotation=annotation, form=form)
    kind = (
        AttentionCheckResult.Kind.PLANTED
        if item.kind == Kind.ATTENTION
        else AttentionCheckResult.Kind.QUALIFICATION
    )
    AttentionCheckResult.objects.create(
        participant=participant,
        assignment=locked,
        kind=kind,
        passed=passed,
        detail=detail,
    )
    if item.kind != Kind.ATTENTION or passed:
        return [], participant.stage
    participant.attention_failures += 1
    participant.save(update_fields=["attention_failures"])
    thresholds = {
        "failures": participant.attention_failures,
        "warn_after": study.attention_warn_after,
        "screen_after": study.attention_screen_after,
    }
    state = rules.attention_state(**thresholds)
    if state == rules.ATTENTION_SCREEN_OUT:
        participant_finish(participant=participant, stage=Stage.SCREENED_OUT)
    elif state == rules.ATTENTION_WARN:
        return [rules.attention_warning(**thresholds)], participant.stage
    return [], participant.stage


def label_from_post(
    *, assignment: Assignment, data: Mapping[str, list[str]]
) -> tuple[ParsedLabel, BoundForm, ItemView]:
    """The answer the item page posted (``data``: each field's values), and the study's form
    and the item's view that read it (built once per request; every check and the stored
    answer use these)."""
    form = study_form(study=assignment.participant.study)
    view = item_view(item=assignment.item, participant_id=assignment.participant_id, form=form)
    return parse_form(data, form=form, item=view), form, view


def annotation_submit_posted(
    *,
    visitor: Visitor,
    assignment_id: int,
    data: Mapping[str, list[str]],
    active_ms: int = 0,
    now: datetime | None = None,
) -> SubmitResult:
    """A submit as the item page posts it, in one transaction from its first read: the
    visitor's assignment found (:func:`annotation.selectors.annotator.annotator_for`, its only
    lookup of the participant) with its row locked by that same read, the posted answer parsed,
    then stored as :func:`annotation_submit` stores it. Raises what the lookup raises (Refused:
    not the visitor's) and SubmissionRefused (with ``label``: what was typed, to show again)."""
    with transaction.atomic():
        assignment = annotator_for(visitor, assignment_id=assignment_id, lock=True).assignment
        label, form, view = label_from_post(assignment=assignment, data=data)
        try:
            return _submit(assignment, assignment, label, active_ms, now, form, view)
        except SubmissionRefused as refusal:
            refusal.label = label
            raise


def annotation_submit(
    *,
    assignment: Assignment,
    label: ParsedLabel,
    active_ms: int = 0,
    now: datetime | None = None,
    form: BoundForm | None = None,
    view: ItemView | None = None,
) -> SubmitResult:
    """Store the label once, in one transaction (the annotation, the assignment, the draft's
    removal, the known-answer results: all or nothing), the assignment's row locked first.
    Refuses (SubmissionRefused) refused text and an early or incomplete submission, writing
    nothing; a repeated submit (another tab) returns the stored annotation unchanged
    (``created`` False).

    ``form`` and ``view``: the study's form and the item's view the caller built to parse the
    label (:func:`label_from_post`), built here when not given; every check and the stored
    answer use these, none builds its own."""
    with transaction.atomic():
        locked = _assignment_locked(assignment.pk)
        return _submit(assignment, locked, label, active_ms, now, form, view)


def _submit(
    assignment: Assignment,
    locked: Assignment,
    label: ParsedLabel,
    active_ms: int,
    now: datetime | None,
    form: BoundForm | None,
    view: ItemView | None,
) -> SubmitResult:
    """The submit inside its transaction: ``locked``, the assignment's row as read under its
    lock; ``assignment``, the same with its participant, study and item loaded."""
    now = now or timezone.now()
    item = assignment.item
    participant = assignment.participant
    study = participant.study
    if locked.state == Assignment.State.SUBMITTED:  # a double submit: the first one won
        existing = Annotation.objects.get(assignment_id=locked.pk)
        return SubmitResult(existing, False, label=label, stage=participant.stage)
    if form is None:
        form = study_form(study=study)
    if view is None:
        view = item_view(item=item, participant_id=assignment.participant_id, form=form)
    _refuse_unready(assignment, study, label, now, form, view)
    if (
        locked.state == Assignment.State.EXPIRED
        and item.kind == Kind.REGULAR
        and not item_take_slot(item_id=item.pk, overlap=study.overlap)
    ):
        raise SubmissionRefused(
            [
                "This item was returned to the pool after a long pause and others have "
                "since completed it. Please continue with the next item."
            ],
            item_gone=True,
        )
    annotation = _store(locked, item, label, active_ms, now, form, view)
    notices, stage = [], participant.stage
    if item.kind in (Kind.ATTENTION, Kind.QUALIFICATION):
        notices, stage = _record_known_answer(locked, item, study, annotation, form)
    elif item.kind == Kind.REGULAR:  # a study with a target checks its interval after it
        labels_arrived_on_commit(study=study)
    return SubmitResult(annotation, True, notices, label=label, stage=stage)
