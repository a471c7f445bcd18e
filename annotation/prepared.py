"""The annotator's prepared statements (see :mod:`core.prepared`): the reads and updates the
item page and a save run on every request, compiled by the ORM once per process and database.

The annotator's two requests run the same few queries thousands of times an hour; building and
compiling their QuerySets costs 10-30 times more CPU than running them (about 1.3 ms against
0.06 ms for these joins). Each statement below is registered, so ``manage.py check`` compares
its compilation with the ORM's (``core.E001``-``E003``). Reads select whole model rows as
``values_list`` columns (:func:`core.prepared.model_columns`); the selectors and services turn
them back into instances with :func:`core.prepared.model_instances`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db.models import Exists, F, OuterRef, QuerySet, Subquery

from annotation.models import Annotation, Assignment, Draft, Participant, Study, StudyItem
from benchmarks.models import Generation, Procedure
from core.prepared import PreparedInsert, PreparedRead, PreparedUpdate, model_columns

# Sentinels: values no constant of these queries has, inside the 32-bit integer range.
_SLUG = "__prepared_slug__"
_NOW = datetime(2073, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC)
_NOW_SAMPLE = datetime(2026, 11, 27, 12, 0, 0, tzinfo=UTC)

# --- the participant and their assignment state (item page) ------------------------------------

PARTICIPANT_STATE_PARTS = [
    (Participant, model_columns(Participant)),
    (Study, model_columns(Study, "study__")),
]


def _participant_state_query(*, participant_id: int, slug: str) -> QuerySet:
    mine = Assignment.objects.filter(participant_id=OuterRef("pk"))
    paths = [path for _, part in PARTICIPANT_STATE_PARTS for _, path in part]
    return (
        Participant.objects.filter(pk=participant_id, study__slug=slug)
        .annotate(
            open_assignment_id=Subquery(
                mine.filter(state=Assignment.State.ACTIVE).values("pk")[:1]
            ),
            has_expired=Exists(mine.filter(state=Assignment.State.EXPIRED)),
        )
        .values_list(*paths, "open_assignment_id", "has_expired")
    )


PARTICIPANT_STATE = PreparedRead(
    "annotation.participant_state",
    model=Participant,
    build=_participant_state_query,
    sentinels={"participant_id": 2_073_000_001, "slug": _SLUG},
)

# --- an assignment with everything a save needs (draft, heartbeat, submit) ---------------------

ASSIGNMENT_FULL_PARTS = [
    (Assignment, model_columns(Assignment)),
    (Participant, model_columns(Participant, "participant__")),
    (Study, model_columns(Study, "participant__study__")),
    (StudyItem, model_columns(StudyItem, "item__")),
    (Generation, model_columns(Generation, "item__generation__", ("model_completion", "scores"))),
    (Procedure, model_columns(Procedure, "item__generation__procedure__", ("source_text",))),
]


def _assignment_full_query(*, assignment_id: int, participant_id: int, slug: str) -> QuerySet:
    paths = [path for _, part in ASSIGNMENT_FULL_PARTS for _, path in part]
    return (
        Assignment.objects.filter(
            pk=assignment_id, participant_id=participant_id, participant__study__slug=slug
        )
        .annotate(has_draft=Exists(Draft.objects.filter(assignment_id=OuterRef("pk"))))
        .values_list(*paths, "has_draft")
    )


ASSIGNMENT_FULL = PreparedRead(
    "annotation.assignment_full",
    model=Assignment,
    build=_assignment_full_query,
    sentinels={"assignment_id": 2_073_000_002, "participant_id": 2_073_000_003, "slug": _SLUG},
)

# The same, the assignment's row locked until the transaction ends (a submit: its first read is
# also the one that locks, so a submit reads its assignment once).
ASSIGNMENT_FULL_LOCKED = PreparedRead(
    "annotation.assignment_full_locked",
    model=Assignment,
    build=lambda **kw: _assignment_full_query(**kw).select_for_update(of=("self",)),
    sentinels={"assignment_id": 2_073_000_005, "participant_id": 2_073_000_006, "slug": _SLUG},
)

# --- an item as its page shows it ---------------------------------------------------------------

ITEM_FULL_PARTS = ASSIGNMENT_FULL_PARTS[3:]
ITEM_FULL_PATHS = [path.removeprefix("item__") for _, part in ITEM_FULL_PARTS for _, path in part]
ITEM_FULL = PreparedRead(
    "annotation.item_full",
    model=StudyItem,
    build=lambda *, item_id: StudyItem.objects.filter(pk=item_id).values_list(*ITEM_FULL_PATHS),
    sentinels={"item_id": 2_073_000_004},
)

# --- claiming: the pool's head and a slot on an item -------------------------------------------


LEAST_ANNOTATED_ORDER = ("n_assigned", "position", "id")
SEEDED_ORDER = ("sample_rank", "id")


def regular_pool(
    *, study_id: int, overlap: int, participant_id: int, order=LEAST_ANNOTATED_ORDER
) -> QuerySet:
    """Regular items with room left that this participant never had, least annotated first
    (or in ``order``: :data:`SEEDED_ORDER` for the fixed seeded order)."""
    return (
        StudyItem.objects.filter(
            study_id=study_id, kind=StudyItem.Kind.REGULAR, n_assigned__lt=overlap
        )
        .exclude(assignments__participant_id=participant_id)
        .order_by(*order)
    )


def _pool_head_query(order):
    """The pool's head, locked (SKIP LOCKED: never waits on a row another claim holds; only the
    item's row), read whole with its generation and procedure as the item page shows it."""

    def build(**kw) -> QuerySet:
        return (
            regular_pool(**kw, order=order)
            .select_for_update(skip_locked=True, of=("self",))
            .values_list(*ITEM_FULL_PATHS)[:1]
        )

    return build


# The claim runs on every item page, and compiling it costs more than running it.
POOL_HEAD = PreparedRead(
    "annotation.pool_head",
    model=StudyItem,
    build=_pool_head_query(LEAST_ANNOTATED_ORDER),
    sentinels={
        "study_id": 2_073_000_011,
        "overlap": 2_073_000_012,
        "participant_id": 2_073_000_013,
    },
)

# The pool's head in the study's fixed seeded order (sampling "seeded"): each item in turn, by
# its seeded rank, until it has k live assignments.
POOL_HEAD_SEEDED = PreparedRead(
    "annotation.pool_head_seeded",
    model=StudyItem,
    build=_pool_head_query(SEEDED_ORDER),
    sentinels={
        "study_id": 2_073_000_014,
        "overlap": 2_073_000_015,
        "participant_id": 2_073_000_016,
    },
)

# A new assignment (Assignment.objects.create, compiled once).
NEW_ASSIGNMENT = PreparedInsert(
    "annotation.new_assignment",
    model=Assignment,
    samples={
        "participant_id": 101,
        "item_id": 102,
        "state": Assignment.State.ACTIVE,
        "served_at": _NOW_SAMPLE,
        "last_seen_at": _NOW_SAMPLE,
        "active_ms": 0,
        "submitted_at": None,
    },
)

# One more live assignment on an item, never past k.
TAKE_SLOT = PreparedUpdate(
    "annotation.take_slot",
    model=StudyItem,
    build=lambda *, item_id, overlap: (
        StudyItem.objects.filter(pk=item_id, n_assigned__lt=overlap),
        {"n_assigned": F("n_assigned") + 1},
    ),
    sentinels={"item_id": 2_073_000_031, "overlap": 2_073_000_032},
)

# --- submitting ---------------------------------------------------------------------------------

ASSIGNMENT_FIELDS = [f.attname for f in Assignment._meta.concrete_fields]
ASSIGNMENT_LOCKED = PreparedRead(
    "annotation.assignment_locked",
    model=Assignment,
    build=lambda *, pk: (
        Assignment.objects.filter(pk=pk).select_for_update().values_list(*ASSIGNMENT_FIELDS)
    ),
    sentinels={"pk": 2_073_000_021},
)

# A submitted answer (Annotation.objects.create, compiled once).
NEW_ANNOTATION = PreparedInsert(
    "annotation.new_annotation",
    model=Annotation,
    samples={
        "assignment_id": 101,
        "participant_id": 102,
        "item_id": 103,
        "has_failure": True,
        "failures": [{"description": "sample", "l1_steps": [1], "l2_steps": [2]}],
        "label": {},
        "comments": "",
        "wall_ms": 1000,
        "active_ms": 900,
        "interface_checks": {"goal_ack": True},
        "submitted_at": _NOW_SAMPLE,
    },
)

# The assignment submitted, with its times (the row is locked by the submit's first read).
MARK_SUBMITTED = PreparedUpdate(
    "annotation.mark_submitted",
    model=Assignment,
    build=lambda *, pk, now, active_ms: (
        Assignment.objects.filter(pk=pk),
        {
            "state": Assignment.State.SUBMITTED,
            "submitted_at": now,
            "last_seen_at": now,
            "active_ms": active_ms,
        },
    ),
    sentinels={"pk": 2_073_000_034, "now": _NOW, "active_ms": 2_073_000_035},
    samples={"pk": 101, "now": _NOW_SAMPLE, "active_ms": 1234},
)

COUNT_DONE = PreparedUpdate(
    "annotation.count_done",
    model=Participant,
    build=lambda *, pk: (Participant.objects.filter(pk=pk), {"n_done": F("n_done") + 1}),
    sentinels={"pk": 2_073_000_033},
)
