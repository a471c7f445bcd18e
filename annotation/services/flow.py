"""Writes of the annotation app: the participant's stages, assignment, drafts, heartbeats and
submissions (studies and entry live in :mod:`annotation.services_study`, re-exported here).
Every rule of the study is enforced here, by the server."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError, connections, router, transaction
from django.db.models import F
from django.db.models.sql import UpdateQuery
from django.utils import timezone

from annotation import conf
from annotation.labels import ParsedLabel, attention_due, cleaned_failures, submission_errors
from annotation.models import (
    Annotation,
    Assignment,
    AttentionCheckResult,
    Draft,
    Participant,
    Study,
    StudyItem,
)
from annotation.selectors.flow import (
    ASSIGNMENT_UNUSED_FIELDS,
    PreparedRead,
    bind,
    bind_plan,
    study_item_for_page,
)

Kind = StudyItem.Kind
Stage = Participant.Stage


class SubmissionRefused(Exception):
    def __init__(self, messages: list[str], *, item_gone: bool = False) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
        self.item_gone = item_gone


# --- stages ---------------------------------------------------------------------------


def participant_consent(*, participant: Participant, agree: bool) -> Participant:
    if participant.stage != Stage.CONSENT:
        return participant
    participant.stage = Stage.TRAINING if agree else Stage.DECLINED
    participant.consented_at = timezone.now() if agree else None
    participant.finished_at = None if agree else timezone.now()
    participant.save(update_fields=["stage", "consented_at", "finished_at"])
    return participant


def participant_finish_training(*, participant: Participant) -> Participant:
    if participant.stage != Stage.TRAINING:
        return participant
    has_qualification = participant.study.items.filter(kind=Kind.QUALIFICATION).exists()
    participant.stage = Stage.QUALIFICATION if has_qualification else Stage.WORKING
    participant.save(update_fields=["stage"])
    return participant


def _finish(participant: Participant, stage: str) -> None:
    participant.stage = stage
    participant.finished_at = timezone.now()
    participant.save(update_fields=["stage", "finished_at"])


# --- assignment -----------------------------------------------------------------------


_last_sweep: dict[int, float] = {}


def _maybe_release_stale(study: Study, now: datetime) -> None:
    """Sweep idle assignments at most every few seconds per process (the sweep is idempotent)."""
    stamp = now.timestamp()
    if stamp - _last_sweep.get(study.pk, 0.0) >= conf.sweep_seconds():
        _last_sweep[study.pk] = stamp
        assignments_release_stale(study=study, now=now)


def assignments_release_stale(*, study: Study, now: datetime | None = None) -> int:
    """Return assignments not seen for the study's timeout to the pool; returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=study.assignment_timeout_minutes)
    released = 0
    with transaction.atomic():
        stale = list(
            Assignment.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(item__study=study, state=Assignment.State.ACTIVE, last_seen_at__lt=cutoff)
            .values_list("pk", "item_id")
        )
        if stale:
            released = Assignment.objects.filter(pk__in=[pk for pk, _ in stale]).update(
                state=Assignment.State.EXPIRED
            )
            for _, item_id in stale:
                StudyItem.objects.filter(pk=item_id, n_assigned__gt=0).update(
                    n_assigned=F("n_assigned") - 1
                )
    return released


class PreparedUpdate:
    """An UPDATE compiled by the ORM once per process and database, then run with new values
    (integer keywords only; see selectors.PreparedRead). ``build(**sentinels)`` returns the
    QuerySet to update and the values to set; returns the number of rows updated."""

    def __init__(self, build, **sentinels: int) -> None:
        self._build = build
        self._sentinels = sentinels
        self._compiled: dict[str, tuple] = {}

    def run(self, model, **values: int) -> int:
        alias = router.db_for_write(model)
        entry = self._compiled.get(alias)
        if entry is None:
            qs, updates = self._build(**self._sentinels)
            query = qs.query.chain(UpdateQuery)
            query.add_update_values(updates)
            sql, params = query.get_compiler(alias).as_sql()
            entry = self._compiled[alias] = (sql, params, bind_plan(params, self._sentinels))
        sql, params, slots = entry
        with connections[alias].cursor() as cursor:
            cursor.execute(sql, bind(params, slots, values))
            return cursor.rowcount


_TAKE_SLOT = PreparedUpdate(
    lambda *, item_id, overlap: (
        StudyItem.objects.filter(pk=item_id, n_assigned__lt=overlap),
        {"n_assigned": F("n_assigned") + 1},
    ),
    item_id=2_073_000_031,
    overlap=2_073_000_032,
)
_COUNT_DONE = PreparedUpdate(
    lambda *, pk: (Participant.objects.filter(pk=pk), {"n_done": F("n_done") + 1}),
    pk=2_073_000_033,
)


def _take_slot(item_id: int, overlap: int) -> bool:
    """Atomically count one more live assignment on an item, never past k."""
    return _TAKE_SLOT.run(StudyItem, item_id=item_id, overlap=overlap) == 1


def _new_assignment(participant: Participant, item: StudyItem, now: datetime) -> Assignment:
    assignment = Assignment.objects.create(
        participant=participant, item=item, served_at=now, last_seen_at=now
    )
    assignment.is_new = True  # no draft to look up
    return assignment


_ASSIGNMENT_FIELDS = [f.attname for f in Assignment._meta.concrete_fields]
_ASSIGNMENT_LOCKED = PreparedRead(
    lambda *, pk: (
        Assignment.objects.filter(pk=pk).select_for_update().values_list(*_ASSIGNMENT_FIELDS)
    ),
    pk=2_073_000_021,
)


def _assignment_locked(pk: int) -> Assignment:
    """The assignment's row, locked until the transaction ends (a prepared read)."""
    rows = _ASSIGNMENT_LOCKED.rows(Assignment, pk=pk)
    if not rows:
        raise Assignment.DoesNotExist(f"assignment {pk}")
    return Assignment.from_db(router.db_for_write(Assignment), _ASSIGNMENT_FIELDS, rows[0])


def _regular_pool(*, study_id: int, overlap: int, participant_id: int):
    """Regular items with room left that this participant never had, least annotated first."""
    return (
        StudyItem.objects.filter(study_id=study_id, kind=Kind.REGULAR, n_assigned__lt=overlap)
        .exclude(assignments__participant_id=participant_id)
        .order_by("n_assigned", "position", "id")
    )


# The pool's head, locked (SKIP LOCKED: never waits on a row another claim holds), compiled once
# per process: the claim runs on every item page, and compiling it costs more than running it.
_POOL_HEAD = PreparedRead(
    lambda **kw: _regular_pool(**kw).select_for_update(skip_locked=True).values_list("pk")[:1],
    study_id=2_073_000_011,
    overlap=2_073_000_012,
    participant_id=2_073_000_013,
)


def _claim_regular(participant: Participant, now: datetime) -> Assignment | None:
    study = participant.study
    pool = {"study_id": study.pk, "overlap": study.overlap, "participant_id": participant.pk}
    # When every candidate is momentarily locked by other claims, look again shortly (bounded)
    # before calling the pool empty; claims never wait on each other, so they cannot deadlock.
    for attempt in range(40):
        head = _POOL_HEAD.rows(StudyItem, **pool)
        if head:
            item_id = head[0][0]
            if _take_slot(item_id, study.overlap):
                item = study_item_for_page(item_id=item_id)
                return _new_assignment(participant, item, now)
            continue
        if not _regular_pool(**pool).exists():
            return None
        time.sleep(min(0.002 * (attempt + 1), 0.05))
    return None


def _resume_expired(
    participant: Participant, expired: list[Assignment], now: datetime
) -> Assignment | None:
    """A participant back after their assignment timed out gets it again if it still has room."""
    for assignment in expired:
        if assignment.item.kind == Kind.REGULAR and not _take_slot(
            assignment.item_id, participant.study.overlap
        ):
            continue
        assignment.state = Assignment.State.ACTIVE
        assignment.last_seen_at = now
        assignment.save(update_fields=["state", "last_seen_at"])
        return assignment
    return None


def _finish_qualification(participant: Participant) -> None:
    answers = list(
        Annotation.objects.filter(
            participant=participant, item__kind=Kind.QUALIFICATION
        ).values_list("has_failure", "item__expected_has_failure")
    )
    score = sum(1 for got, want in answers if got == want) / len(answers) if answers else 1.0
    participant.qualification_score = score
    participant.save(update_fields=["qualification_score"])
    if score + 1e-9 >= participant.study.qualification_pass_threshold:
        participant.stage = Stage.WORKING
        participant.save(update_fields=["stage"])
    else:
        _finish(participant, Stage.SCREENED_OUT)


def _open_assignment(participant: Participant) -> Assignment | None:
    return (
        Assignment.objects.filter(participant_id=participant.pk, state=Assignment.State.ACTIVE)
        .select_related("item__generation__procedure")
        .defer(*ASSIGNMENT_UNUSED_FIELDS)
        .order_by("served_at")
        .first()
    )


def _plain_claim_due(participant: Participant) -> bool:
    """Whether the next item is simply the next regular item (the steady state of a session)."""
    study = participant.study
    return (
        study.status == Study.Status.OPEN
        and participant.n_done < study.items_per_participant
        and not attention_due(
            rate=study.attention_rate,
            regular_done=participant.n_done,
            attention_served=participant.n_attention_served,
        )
    )


def _claim_regular_optimistic(participant: Participant, now: datetime) -> Assignment | None:
    """Claim the next regular item without locking the participant row.

    Safe because the database itself refuses a second active assignment for a participant
    (and the same item twice): if another tab of this participant claimed meanwhile, the insert
    fails, the whole claim (its slot on the item included) rolls back, and the caller takes the
    locked path, which finds that tab's assignment. None also when the pool looks empty: the
    locked path decides whether the participant is done.
    """
    try:
        with transaction.atomic():
            return _claim_regular(participant, now)
    except IntegrityError:
        return None


def participant_current_assignment(
    *, participant: Participant, now: datetime | None = None
) -> Assignment | None:
    """The item this participant works on now: the open one, or a newly claimed one.

    Returns None when the participant has no item to do; their ``stage`` then says why
    (done, screened out). Called on every item page load, so a refresh or a second device
    lands on exactly the same assignment.
    """
    now = now or timezone.now()
    study = participant.study
    # The participant may come with its assignment state read in the same query
    # (selectors.participant_for_slug(with_assignment_state=True)); else read it here.
    known = hasattr(participant, "open_assignment_id")
    if not known or participant.open_assignment_id is not None:
        current = _open_assignment(participant)
        if current is not None:  # a refresh, a second tab: no lock needed
            return current
    if participant.stage == Stage.WORKING:
        _maybe_release_stale(study, now)
        if known and not participant.has_expired and _plain_claim_due(participant):
            claimed = _claim_regular_optimistic(participant, now)
            if claimed is not None:
                return claimed
    with transaction.atomic():
        participant = (
            Participant.objects.select_for_update(of=("self",))
            .select_related("study")
            .get(pk=participant.pk)
        )
        study = participant.study
        unfinished = list(
            Assignment.objects.filter(
                participant_id=participant.pk,
                state__in=[Assignment.State.ACTIVE, Assignment.State.EXPIRED],
            )
            .select_related("item__generation__procedure")
            .defer(*ASSIGNMENT_UNUSED_FIELDS)
            .order_by("state", "-served_at")
        )
        if unfinished and unfinished[0].state == Assignment.State.ACTIVE:
            return unfinished[0]
        if participant.stage == Stage.QUALIFICATION:
            resumed = _resume_expired(participant, unfinished, now)
            if resumed is not None:
                return resumed
            item = (
                study.items.filter(kind=Kind.QUALIFICATION)
                .exclude(assignments__participant=participant)
                .order_by("position", "id")
                .first()
            )
            if item is not None:
                return _new_assignment(participant, item, now)
            _finish_qualification(participant)
        if participant.stage != Stage.WORKING:
            return None
        if study.status != Study.Status.OPEN:
            return None
        resumed = _resume_expired(participant, unfinished, now)
        if resumed is not None:
            return resumed
        if participant.n_done >= study.items_per_participant:
            _finish(participant, Stage.DONE)
            return None
        if attention_due(
            rate=study.attention_rate,
            regular_done=participant.n_done,
            attention_served=participant.n_attention_served,
        ):
            item = (
                study.items.filter(kind=Kind.ATTENTION)
                .exclude(assignments__participant=participant)
                .order_by("position", "id")
                .first()
            )
            if item is not None:
                participant.n_attention_served += 1
                participant.save(update_fields=["n_attention_served"])
                return _new_assignment(participant, item, now)
        assignment = _claim_regular(participant, now)
        if assignment is None:
            _finish(participant, Stage.DONE)
        return assignment


# --- drafts, heartbeats, submissions --------------------------------------------------


def _clamped_active(assignment: Assignment, delta_ms: int, now: datetime) -> int:
    cap = conf.heartbeat_seconds() * 2_000
    delta = max(0, min(int(delta_ms or 0), cap))
    wall = int((now - assignment.served_at).total_seconds() * 1000)
    return max(0, min(assignment.active_ms + delta, wall))


def assignment_heartbeat(
    *, assignment: Assignment, active_ms: int, now: datetime | None = None
) -> Assignment:
    """Record that the page is open; ``active_ms``: active time since the page's last beat."""
    now = now or timezone.now()
    if assignment.state != Assignment.State.ACTIVE:
        return assignment
    assignment.active_ms = _clamped_active(assignment, active_ms, now)
    assignment.last_seen_at = now
    Assignment.objects.filter(pk=assignment.pk, state=Assignment.State.ACTIVE).update(
        active_ms=assignment.active_ms, last_seen_at=now
    )
    return assignment


def draft_save(
    *, assignment: Assignment, label: ParsedLabel, active_ms: int = 0, now: datetime | None = None
) -> bool:
    """Autosave; ignored (returns False) once the assignment is submitted."""
    now = now or timezone.now()
    if assignment.state == Assignment.State.SUBMITTED:
        return False
    with transaction.atomic():
        Draft.objects.update_or_create(
            assignment=assignment, defaults={"data": label.as_draft(), "updated_at": now}
        )
        assignment_heartbeat(assignment=assignment, active_ms=active_ms, now=now)
    return True


@dataclass
class SubmitResult:
    annotation: Annotation
    created: bool
    notices: list[str] = field(default_factory=list)


def annotation_submit(
    *, assignment: Assignment, label: ParsedLabel, active_ms: int = 0, now: datetime | None = None
) -> SubmitResult:
    """Store the label once. Refuses (SubmissionRefused) an early or incomplete submission;
    a repeated submit returns the stored annotation unchanged."""
    now = now or timezone.now()
    item = assignment.item
    study = assignment.participant.study
    if assignment.state == Assignment.State.SUBMITTED:
        existing = Annotation.objects.filter(assignment_id=assignment.pk).first()
        if existing is not None:
            return SubmitResult(existing, False)
    n_l2 = len(item.generation.predicted_steps)
    problems: list[str] = []
    waited = (now - assignment.served_at).total_seconds()
    if waited < study.min_seconds_per_item:
        left = int(study.min_seconds_per_item - waited + 0.999)
        problems.append(
            f"Too early: please spend at least {study.min_seconds_per_item} s on each item "
            f"({left} s left). Your answers are kept."
        )
    errors = submission_errors(label, n_l2=n_l2)
    problems.extend(errors)
    interface_ok = label.goal_ack and len(label.read_steps) == n_l2
    if problems:
        if not interface_ok:
            AttentionCheckResult.objects.create(
                participant_id=assignment.participant_id,
                assignment=assignment,
                kind=AttentionCheckResult.Kind.INTERFACE,
                passed=False,
                detail=f"goal_ack={label.goal_ack}, steps read {len(label.read_steps)}/{n_l2}",
            )
        draft_save(assignment=assignment, label=label, active_ms=active_ms, now=now)
        raise SubmissionRefused(problems)

    notices: list[str] = []
    with transaction.atomic():
        locked = _assignment_locked(assignment.pk)
        if locked.state == Assignment.State.SUBMITTED:  # a double submit: the first one won
            return SubmitResult(Annotation.objects.get(assignment_id=locked.pk), False)
        if locked.state == Assignment.State.EXPIRED:
            if item.kind == Kind.REGULAR and not _take_slot(item.pk, study.overlap):
                raise SubmissionRefused(
                    [
                        "This item was returned to the pool after a long pause and others have since "
                        "completed it. Please continue with the next item."
                    ],
                    item_gone=True,
                )
        active = _clamped_active(locked, active_ms, now)
        wall_ms = int((now - locked.served_at).total_seconds() * 1000)
        annotation = Annotation.objects.create(
            assignment=locked,
            participant_id=locked.participant_id,
            item=item,
            has_failure=bool(label.has_failure),
            failures=cleaned_failures(label),
            comments=label.comments.strip(),
            wall_ms=wall_ms,
            active_ms=min(active, wall_ms),
            interface_checks={
                "goal_ack": label.goal_ack,
                "steps_read": len(label.read_steps),
                "n_steps": n_l2,
            },
            submitted_at=now,
        )
        Assignment.objects.filter(pk=locked.pk).update(
            state=Assignment.State.SUBMITTED, submitted_at=now, last_seen_at=now, active_ms=active
        )
        if getattr(assignment, "has_draft", True):  # read with the assignment when known
            Draft.objects.filter(assignment_id=locked.pk).delete()
        if item.kind == Kind.REGULAR:
            _COUNT_DONE.run(Participant, pk=locked.participant_id)
        elif item.kind in (Kind.ATTENTION, Kind.QUALIFICATION):
            participant = (
                Participant.objects.select_for_update(of=("self",))
                .select_related("study")
                .get(pk=locked.participant_id)
            )
            passed = annotation.has_failure == item.expected_has_failure
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
                detail=f"answered has_failure={annotation.has_failure}, expected {item.expected_has_failure}",
            )
            if item.kind == Kind.ATTENTION and not passed:
                participant.attention_failures += 1
                participant.save(update_fields=["attention_failures"])
                if (
                    study.attention_screen_after
                    and participant.attention_failures >= study.attention_screen_after
                ):
                    _finish(participant, Stage.SCREENED_OUT)
                elif (
                    study.attention_warn_after
                    and participant.attention_failures >= study.attention_warn_after
                ):
                    notices.append(attention_warning(participant=participant))
    return SubmitResult(annotation, True, notices)


def attention_warning(*, participant: Participant) -> str:
    study = participant.study
    text = (
        f"Heads up: you have missed {participant.attention_failures} attention check"
        f"{'s' if participant.attention_failures != 1 else ''}. Please read every item carefully."
    )
    if study.attention_screen_after:
        text += f" After {study.attention_screen_after} missed checks the session ends."
    return text
