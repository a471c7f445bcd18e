"""Writes of assignment: which item a participant works on now, claiming items (k slots per
item, never twice), and returning idle assignments to the pool.

Which regular item comes next is the study's sampling strategy (``Study.sampling``):
least annotated first (the default), a balanced mix of topics or of generators per
participant (the stratum they have seen least, least annotated within it), or a fixed seeded
order (each item in turn by its seeded rank until it has k). Every strategy claims the same
way: the pool's head is read with ``FOR UPDATE SKIP LOCKED`` and the slot is taken by a
conditional update (never past k); the database refuses a second active assignment and the
same item twice for one participant.

The claim runs on every item page load; its hot reads and the slot update are prepared
statements (:mod:`annotation.prepared`); the stratified strategies add two small ORM reads."""

from __future__ import annotations

import time
from contextlib import nullcontext
from datetime import datetime, timedelta

from django.db import IntegrityError, connections, router, transaction
from django.db.models import Count, F
from django.utils import timezone

from annotation import conf, prepared, prepared_cte, rules
from annotation.models import Assignment, Participant, Study, StudyItem
from annotation.selectors.flow import (
    next_known_item,
    participant_open_assignment,
    participant_unfinished_assignments,
    study_item_for_page,
    study_item_from_row,
)
from annotation.services.flow import participant_finish, participant_finish_qualification

Kind = StudyItem.Kind
Stage = Participant.Stage


# --- returning idle assignments to the pool ---------------------------------------------------

_last_sweep: dict[int, float] = {}


def _maybe_release_stale(study: Study, now: datetime) -> None:
    """Sweep idle assignments at most every few seconds per process (the sweep is idempotent)."""
    stamp = now.timestamp()
    if stamp - _last_sweep.get(study.pk, 0.0) >= conf.sweep_seconds():
        _last_sweep[study.pk] = stamp
        assignments_release_stale(study=study, now=now)


def _release(active, *, skip_locked: bool = True) -> int:
    """Return these active assignments (a queryset) to the pool: each expires and gives its
    item's slot back. The one home of freeing, for the idle timer and for a participant whose
    Prolific place ended (returned, timed out, rejected). Call inside a transaction; the
    sweep skips rows another transaction holds, an ended place waits for them."""
    rows = list(
        active.filter(state=Assignment.State.ACTIVE)
        .select_for_update(skip_locked=skip_locked, of=("self",))
        .values_list("pk", "item_id")
    )
    if not rows:
        return 0
    released = Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(
        state=Assignment.State.EXPIRED
    )
    for _, item_id in rows:
        StudyItem.objects.filter(pk=item_id, n_assigned__gt=0).update(
            n_assigned=F("n_assigned") - 1
        )
    return released


def assignments_release_stale(*, study: Study, now: datetime | None = None) -> int:
    """Return assignments not seen for the study's timeout to the pool; returns how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=study.assignment_timeout_minutes)
    with transaction.atomic():
        return _release(Assignment.objects.filter(item__study=study, last_seen_at__lt=cutoff))


def participant_assignments_release(*, participant: Participant) -> int:
    """Return every item this participant holds to the pool at once (their place ended on
    Prolific); returns how many."""
    with transaction.atomic():
        return _release(Assignment.objects.filter(participant=participant), skip_locked=False)


# --- the fixed seeded order ----------------------------------------------------------------


def study_items_first(study: Study) -> set[int]:
    """The generations whose items go first in the study's fixed seeded order: those its
    escalation put first (``design["escalation"]["first_generation_ids"]``, written by
    :mod:`validation.escalation.services`); empty when none."""
    escalation = (study.design or {}).get("escalation") or {}
    return set(escalation.get("first_generation_ids") or ())


@transaction.atomic
def study_sample_ranks_refresh(*, study: Study) -> int:
    """Give every item its place in the study's fixed seeded order (after the seed changed, items
    were added in the console or an escalation put some first: :func:`study_items_first`);
    returns how many changed."""
    items = list(StudyItem.objects.filter(study=study).only("pk", "generation_id", "sample_rank"))
    ranks = rules.seeded_ranks(
        seed=study.sampling_seed,
        keys={item.generation_id for item in items},
        first=study_items_first(study),
    )
    changed = []
    for item in items:
        rank = ranks[item.generation_id]
        if item.sample_rank != rank:
            item.sample_rank = rank
            changed.append(item)
    StudyItem.objects.bulk_update(changed, ["sample_rank"], batch_size=500)
    return len(changed)


# --- slots and claims -------------------------------------------------------------------------


def item_take_slot(*, item_id: int, overlap: int) -> bool:
    """Atomically count one more live assignment on an item, never past k."""
    return prepared.TAKE_SLOT.run(item_id=item_id, overlap=overlap) == 1


def _new_assignment(participant: Participant, item: StudyItem, now: datetime) -> Assignment:
    assignment = Assignment(participant=participant, item=item, served_at=now, last_seen_at=now)
    prepared.NEW_ASSIGNMENT.insert(assignment)
    assignment.is_new = True  # no draft to look up
    return assignment


# The stratum of an item under each stratified sampling strategy: one path per dimension.
TOPIC_PATH, GENERATOR_PATH = "generation__procedure__topic_id", "generation__generator_id"
STRATUM_PATHS = {
    Study.Sampling.BY_TOPIC: (TOPIC_PATH,),
    Study.Sampling.BY_GENERATOR: (GENERATOR_PATH,),
    Study.Sampling.BY_TOPIC_AND_GENERATOR: (TOPIC_PATH, GENERATOR_PATH),
}


def _stratified_head(study: Study, pool: dict) -> int | None:
    """The least annotated free item of the stratum that keeps this participant's mix most
    balanced (:func:`annotation.rules.stratum_next`)."""
    paths = STRATUM_PATHS[study.sampling]
    base = prepared.regular_pool(**pool)
    open_strata = set(base.order_by().values_list(*paths).distinct())
    had = [f"item__{path}" for path in paths]
    seen = {
        tuple(row[:-1]): row[-1]
        for row in Assignment.objects.filter(
            participant_id=pool["participant_id"], item__kind=Kind.REGULAR
        )
        .values(*had)
        .annotate(n=Count("id"))
        .values_list(*had, "n")
        .order_by()
    }
    stratum = rules.stratum_next(open_strata=open_strata, seen=seen)
    if stratum is None:
        return None
    lookup: dict[str, object] = {}
    for path, value in zip(paths, stratum, strict=True):  # an item without a topic: NULL
        lookup.update({f"{path}__isnull": True} if value is None else {path: value})
    return (
        base.filter(**lookup)
        .select_for_update(skip_locked=True, of=("self",))
        .values_list("pk", flat=True)
        .first()
    )


def _pool_head(study: Study, pool: dict) -> tuple[int, StudyItem | None] | None:
    """The next free regular item for this participant under the study's sampling strategy,
    locked (SKIP LOCKED): its id, and the item as its page shows it where the same read gave
    it; None when none is free right now."""
    if study.sampling in STRATUM_PATHS:
        item_id = _stratified_head(study, pool)
        return None if item_id is None else (item_id, None)
    statement = (
        prepared.POOL_HEAD_SEEDED if study.sampling == Study.Sampling.SEEDED else prepared.POOL_HEAD
    )
    head = statement.rows(**pool)
    if not head:
        return None
    item = study_item_from_row(head[0])
    return item.pk, item


def _claim_regular(participant: Participant, now: datetime) -> Assignment | None:
    study = participant.study
    pool = {"study_id": study.pk, "overlap": study.overlap, "participant_id": participant.pk}
    # When every candidate is momentarily locked by other claims, look again shortly (bounded)
    # before calling the pool empty; claims never wait on each other, so they cannot deadlock.
    for attempt in range(40):
        head = _pool_head(study, pool)
        if head is not None:
            item_id, item = head
            if item_take_slot(item_id=item_id, overlap=study.overlap):
                if item is None:
                    item = study_item_for_page(item_id=item_id)
                else:
                    item.n_assigned += 1  # the slot just taken
                return _new_assignment(participant, item, now)
            continue
        if not prepared.regular_pool(**pool).exists():
            return None
        time.sleep(min(0.002 * (attempt + 1), 0.05))
    return None


def _resume_expired(
    participant: Participant, expired: list[Assignment], now: datetime
) -> Assignment | None:
    """A participant back after their assignment timed out gets it again if it still has room."""
    for assignment in expired:
        if assignment.item.kind == Kind.REGULAR and not item_take_slot(
            item_id=assignment.item_id, overlap=participant.study.overlap
        ):
            continue
        assignment.state = Assignment.State.ACTIVE
        assignment.last_seen_at = now
        assignment.save(update_fields=["state", "last_seen_at"])
        return assignment
    return None


def _plain_claim_due(participant: Participant) -> bool:
    """Whether the next item is simply the next regular item (the steady state of a session)."""
    study = participant.study
    return (
        study.status == Study.Status.OPEN
        and participant.n_done < study.items_per_participant
        and not rules.attention_due(
            rate=study.attention_rate,
            regular_done=participant.n_done,
            attention_served=participant.n_attention_served,
        )
        and not rules.gold_due(
            rate=study.gold_rate,
            regular_done=participant.n_done,
            gold_served=participant.n_gold_served,
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


def _claim_in_one_statement(participant: Participant, now: datetime) -> Assignment | None:
    """The optimistic claim as one statement (PostgreSQL: :data:`annotation.prepared_cte.CLAIM`):
    the pool's head locked (SKIP LOCKED), its slot taken, the assignment inserted, the item read,
    atomic without a transaction of its own. None when it claimed nothing (no free item, every
    candidate locked, another tab of this participant claimed meanwhile: the database refuses a
    second active assignment): the locked path then decides, as after the ORM claim."""
    study = participant.study
    statement = prepared_cte.CLAIM_SEEDED if study.sampling == Study.Sampling.SEEDED else None
    pool = {"study_id": study.pk, "overlap": study.overlap, "participant_id": participant.pk}
    new = {"participant_id": participant.pk, "item_id": None, "state": Assignment.State.ACTIVE}
    new |= {"served_at": now, "last_seen_at": now, "active_ms": 0, "submitted_at": None}
    connection = connections[router.db_for_write(Assignment)]
    try:  # inside a caller's transaction, a savepoint keeps it usable after a refusal
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            got = (statement or prepared_cte.CLAIM).run(pool=pool, new=new)
    except IntegrityError:
        return None
    if got is None:
        return None
    row, assignment_id = got
    item = study_item_from_row(row)
    item.n_assigned += 1  # the slot just taken
    new |= {"item_id": item.pk}
    assignment = Assignment.from_db(connection.alias, ["id", *new], [assignment_id, *new.values()])
    assignment.participant, assignment.item = participant, item
    assignment.is_new = True  # no draft to look up
    return assignment


def _next_qualification(participant: Participant, unfinished: list, now: datetime):
    """The next qualification item, or None once all are answered (the participant is then
    scored: on to the items, or screened out)."""
    resumed = _resume_expired(participant, unfinished, now)
    if resumed is not None:
        return resumed
    item = next_known_item(
        study=participant.study, participant=participant, kind=Kind.QUALIFICATION
    )
    if item is not None:
        return _new_assignment(participant, item, now)
    participant_finish_qualification(participant=participant)
    return None


def _next_working(participant: Participant, unfinished: list, now: datetime):
    """The next item of a working participant: one returned to the pool, a planted attention
    check when one is due, a silent gold item when one is due, else the next regular item
    (the study's sampling strategy); None when done."""
    study = participant.study
    resumed = _resume_expired(participant, unfinished, now)
    if resumed is not None:
        return resumed
    if participant.n_done >= study.items_per_participant:
        participant_finish(participant=participant, stage=Stage.DONE)
        return None
    if rules.attention_due(
        rate=study.attention_rate,
        regular_done=participant.n_done,
        attention_served=participant.n_attention_served,
    ):
        item = next_known_item(study=study, participant=participant, kind=Kind.ATTENTION)
        if item is not None:
            participant.n_attention_served += 1
            participant.save(update_fields=["n_attention_served"])
            return _new_assignment(participant, item, now)
    if rules.gold_due(
        rate=study.gold_rate, regular_done=participant.n_done, gold_served=participant.n_gold_served
    ):
        item = next_known_item(study=study, participant=participant, kind=Kind.GOLD)
        if item is not None:
            participant.n_gold_served += 1
            participant.save(update_fields=["n_gold_served"])
            return _new_assignment(participant, item, now)
    assignment = _claim_regular(participant, now)
    if assignment is None:
        participant_finish(participant=participant, stage=Stage.DONE)
    return assignment


def participant_current_assignment(
    *, participant: Participant, now: datetime | None = None
) -> Assignment | None:
    """The item this participant works on now: the open one, or a newly claimed one.

    Returns None when the participant has no item to do; their ``stage`` then says why
    (done, screened out). Called on every item page load, so a refresh or a second device
    lands on exactly the same assignment.
    """
    now = now or timezone.now()
    # The participant may come with its assignment state read in the same query
    # (selectors.annotator.annotator_for(with_assignment_state=True)); else read it here.
    known = hasattr(participant, "open_assignment_id")
    if not known or participant.open_assignment_id is not None:
        current = participant_open_assignment(participant_id=participant.pk)
        if current is not None:  # a refresh, a second tab: no lock needed
            return current
    if participant.stage == Stage.WORKING:
        _maybe_release_stale(participant.study, now)
        if known and not participant.has_expired and _plain_claim_due(participant):
            one_statement = (
                participant.study.sampling not in STRATUM_PATHS and prepared_cte.available()
            )
            claim = _claim_in_one_statement if one_statement else _claim_regular_optimistic
            claimed = claim(participant, now)
            if claimed is not None:
                return claimed
    with transaction.atomic():
        participant = (
            Participant.objects.select_for_update(of=("self",))
            .select_related("study")
            .get(pk=participant.pk)
        )
        unfinished = participant_unfinished_assignments(participant_id=participant.pk)
        if unfinished and unfinished[0].state == Assignment.State.ACTIVE:
            return unfinished[0]
        if participant.stage == Stage.QUALIFICATION:
            assignment = _next_qualification(participant, unfinished, now)
            if assignment is not None:
                return assignment
        if participant.stage != Stage.WORKING or participant.study.status != Study.Status.OPEN:
            return None
        return _next_working(participant, unfinished, now)
