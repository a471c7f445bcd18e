"""Reads of the annotation app: what a participant may see, study progress, label rows and exports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from django.db import connections, router
from django.db.models import Count, Exists, Model, OuterRef, Q, QuerySet, Subquery

from annotation.labels import first_failure_step
from annotation.models import (
    Annotation,
    Assignment,
    AttentionCheckResult,
    Draft,
    Participant,
    Study,
    StudyItem,
)
from benchmarks.models import Generation, Procedure

# What an item page or a save never shows: the mined source document, the raw model output and
# scores. Left out of the hot reads (a procedure's source text is typically 2.5-6 KB).
ITEM_UNUSED_FIELDS = (
    "generation__procedure__source_text",
    "generation__model_completion",
    "generation__scores",
)
ASSIGNMENT_UNUSED_FIELDS = tuple(f"item__{name}" for name in ITEM_UNUSED_FIELDS)


# --- prepared reads ---------------------------------------------------------------------
# The annotator's two requests run the same few reads thousands of times an hour. Building a
# QuerySet and compiling it to SQL costs 10-30 times more CPU than running it (about 1.3 ms
# against 0.06 ms for these joins), so these reads are compiled by the ORM once per process and
# database, then run with new values; rows become model instances as the ORM would make them.


class PreparedRead:
    """A values_list read compiled once. ``build(**sentinels)`` returns the QuerySet; each
    sentinel value marks where that keyword's value goes in the compiled parameters (pick
    values no constant of the query has, inside the 32-bit integer range, else the ORM may
    compile the lookup away). A locking read (select_for_update) runs on the write database."""

    def __init__(self, build: Callable[..., QuerySet], **sentinels: object) -> None:
        self._build = build
        self._sentinels = sentinels
        self._locking: bool | None = None
        self._compiled: dict[str, tuple] = {}

    def _compile(self, alias: str) -> tuple:
        qs = self._build(**self._sentinels)
        query = qs.query
        compiler = query.get_compiler(alias)
        sql, params = compiler.as_sql()
        slots = bind_plan(params, self._sentinels)
        expressions = [col for col, _, _ in compiler.select]
        converters = compiler.get_converters(expressions)
        names = [*query.extra_select, *query.values_select, *query.annotation_select]
        fields = list(qs._fields)
        order = [names.index(f) for f in fields]
        entry = (
            sql,
            params,
            slots,
            converters,
            None if order == list(range(len(order))) else order,
        )
        self._compiled[alias] = entry
        return entry

    def rows(self, model: type[Model], **values: object) -> list[tuple]:
        if self._locking is None:
            self._locking = bool(self._build(**self._sentinels).query.select_for_update)
        alias = router.db_for_write(model) if self._locking else router.db_for_read(model)
        entry = self._compiled.get(alias) or self._compile(alias)
        sql, params, slots, converters, order = entry
        connection = connections[alias]
        with connection.cursor() as cursor:
            cursor.execute(sql, bind(params, slots, values))
            rows = cursor.fetchall()
        out = []
        for row in rows:
            if converters:
                row = list(row)
                for pos, (convs, expression) in converters.items():
                    value = row[pos]
                    for convert in convs:
                        value = convert(value, expression, connection)
                    row[pos] = value
            out.append(tuple(row[i] for i in order) if order else tuple(row))
        return out


def bind_plan(params, sentinels: dict[str, object]) -> list:
    """Where each keyword goes among compiled parameters: (name, type) per slot, the type being
    the one the backend wrapped the sentinel in (psycopg's Int4) so new values are bound alike;
    _CONSTANT for the query's own constants."""
    by_value = {_param_key(v): name for name, v in sentinels.items()}
    slots = [
        (by_value[_param_key(p)], type(p)) if _param_key(p) in by_value else _CONSTANT
        for p in params
    ]
    missing = set(sentinels) - {slot[0] for slot in slots if slot is not _CONSTANT}
    if missing:
        raise RuntimeError(f"prepared query: parameters {sorted(missing)} not found in the SQL")
    return slots


def bind(params, slots: list, values: dict[str, object]) -> list:
    return [
        p if slot is _CONSTANT else slot[1](values[slot[0]])
        for p, slot in zip(params, slots, strict=True)
    ]


_CONSTANT = object()


def _param_key(value: object) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        return (int, int(value))
    return (type(value), value)


def _field_paths(model: type[Model], prefix: str, leave_out: tuple[str, ...] = ()) -> list:
    """The model's loaded fields (in model order) and their values_list paths under ``prefix``."""
    fields = [f for f in model._meta.concrete_fields if f.name not in leave_out]
    return [(f, prefix + f.attname) for f in fields]


def _instances(alias: str, row: tuple, parts: list[tuple[type[Model], list]]) -> list[Model]:
    """Model instances from consecutive slices of ``row``, as the ORM's from_db makes them."""
    out, start = [], 0
    for model, paths in parts:
        values = row[start : start + len(paths)]
        out.append(model.from_db(alias, [f.attname for f, _ in paths], values))
        start += len(paths)
    return out


def participant_for_session(*, study: Study, participant_id: int | None) -> Participant | None:
    if not participant_id:
        return None
    return (
        Participant.objects.select_related("study").filter(pk=participant_id, study=study).first()
    )


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
    rows = _PARTICIPANT_STATE.rows(Participant, participant_id=participant_id, slug=slug)
    if not rows:
        return None
    row = rows[0]
    alias = router.db_for_read(Participant)
    participant, study = _instances(alias, row, _PARTICIPANT_STATE_PARTS)
    participant.study = study
    participant.open_assignment_id, participant.has_expired = row[-2], bool(row[-1])
    return participant


_PARTICIPANT_STATE_PARTS = [
    (Participant, _field_paths(Participant, "")),
    (Study, _field_paths(Study, "study__")),
]


def _participant_state_query(*, participant_id: int, slug: str) -> QuerySet:
    mine = Assignment.objects.filter(participant_id=OuterRef("pk"))
    paths = [path for _, part in _PARTICIPANT_STATE_PARTS for _, path in part]
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


_PARTICIPANT_STATE = PreparedRead(
    _participant_state_query, participant_id=2_073_000_001, slug="__prepared_slug__"
)


def participant_for_user(*, study: Study, user) -> Participant | None:
    if not getattr(user, "is_authenticated", False):
        return None
    return Participant.objects.select_related("study").filter(study=study, user=user).first()


def assignment_for_participant(
    *, participant: Participant, assignment_id: int
) -> Assignment | None:
    """Only the participant's own assignment; None for anyone else's."""
    assignment = (
        Assignment.objects.select_related("item__generation__procedure")
        .defer(*ASSIGNMENT_UNUSED_FIELDS)
        .filter(pk=assignment_id, participant=participant)
        .first()
    )
    if assignment is not None:
        assignment.participant = participant  # already loaded, with its study
    return assignment


def assignment_for_cookie(
    *, slug: str, participant_id: int | None, assignment_id: int
) -> Assignment | None:
    """One query for a save, draft or heartbeat: the assignment with its participant, study,
    item, generation and procedure, and whether a draft exists; only if it belongs to the
    participant of the signed cookie in this study. None otherwise (the caller then looks
    the participant up the long way, for its message or an account-based entry)."""
    if not participant_id:
        return None
    rows = _ASSIGNMENT_FULL.rows(
        Assignment, assignment_id=assignment_id, participant_id=participant_id, slug=slug
    )
    if not rows:
        return None
    row = rows[0]
    alias = router.db_for_read(Assignment)
    assignment, participant, study, item, generation, procedure = _instances(
        alias, row, _ASSIGNMENT_FULL_PARTS
    )
    participant.study = study
    generation.procedure = procedure
    item.generation = generation
    assignment.participant = participant
    assignment.item = item
    assignment.has_draft = bool(row[-1])
    return assignment


_ASSIGNMENT_FULL_PARTS = [
    (Assignment, _field_paths(Assignment, "")),
    (Participant, _field_paths(Participant, "participant__")),
    (Study, _field_paths(Study, "participant__study__")),
    (StudyItem, _field_paths(StudyItem, "item__")),
    (Generation, _field_paths(Generation, "item__generation__", ("model_completion", "scores"))),
    (Procedure, _field_paths(Procedure, "item__generation__procedure__", ("source_text",))),
]


def _assignment_full_query(*, assignment_id: int, participant_id: int, slug: str) -> QuerySet:
    paths = [path for _, part in _ASSIGNMENT_FULL_PARTS for _, path in part]
    return (
        Assignment.objects.filter(
            pk=assignment_id, participant_id=participant_id, participant__study__slug=slug
        )
        .annotate(has_draft=Exists(Draft.objects.filter(assignment_id=OuterRef("pk"))))
        .values_list(*paths, "has_draft")
    )


_ASSIGNMENT_FULL = PreparedRead(
    _assignment_full_query,
    assignment_id=2_073_000_002,
    participant_id=2_073_000_003,
    slug="__prepared_slug__",
)


def study_item_for_page(*, item_id: int) -> StudyItem | None:
    """An item with its generation and procedure, as the item page shows it (one query)."""
    rows = _ITEM_FULL.rows(StudyItem, item_id=item_id)
    if not rows:
        return None
    item, generation, procedure = _instances(
        router.db_for_read(StudyItem), rows[0], _ITEM_FULL_PARTS
    )
    generation.procedure = procedure
    item.generation = generation
    return item


_ITEM_FULL_PARTS = _ASSIGNMENT_FULL_PARTS[3:]
_ITEM_FULL = PreparedRead(
    lambda *, item_id: StudyItem.objects.filter(pk=item_id).values_list(
        *[path.removeprefix("item__") for _, part in _ITEM_FULL_PARTS for _, path in part]
    ),
    item_id=2_073_000_004,
)


def assignment_draft(*, assignment: Assignment) -> dict:
    draft = Draft.objects.filter(assignment=assignment).values_list("data", flat=True).first()
    return draft or {}


def training_items(*, study: Study) -> list[StudyItem]:
    return list(
        study.items.filter(kind=StudyItem.Kind.TRAINING)
        .select_related("generation__procedure")
        .order_by("position", "id")
    )


def participant_progress(*, participant: Participant) -> dict:
    study = participant.study
    return {"done": participant.n_done, "total": study.items_per_participant}


def study_progress(*, study: Study) -> dict:
    """Items by number of completed annotations (0..k), participants by stage, attention results."""
    regular = StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).annotate(
        n_done=Count("annotations")
    )
    per_item = Counter(min(n, study.overlap) for n in regular.values_list("n_done", flat=True))
    n_items = sum(per_item.values())
    stages = dict(
        Participant.objects.filter(study=study)
        .values_list("stage")
        .annotate(n=Count("id"))
        .values_list("stage", "n")
    )
    checks = AttentionCheckResult.objects.filter(participant__study=study).aggregate(
        planted_total=Count("id", filter=Q(kind=AttentionCheckResult.Kind.PLANTED)),
        planted_failed=Count("id", filter=Q(kind=AttentionCheckResult.Kind.PLANTED, passed=False)),
        interface_failed=Count(
            "id", filter=Q(kind=AttentionCheckResult.Kind.INTERFACE, passed=False)
        ),
        qualification_failed=Count(
            "id", filter=Q(kind=AttentionCheckResult.Kind.QUALIFICATION, passed=False)
        ),
    )
    n_annotations = Annotation.objects.filter(
        item__study=study, item__kind=StudyItem.Kind.REGULAR
    ).count()
    return {
        "n_items": n_items,
        "items_by_done": [(n, per_item.get(n, 0)) for n in range(study.overlap + 1)],
        "items_complete": per_item.get(study.overlap, 0),
        "n_annotations": n_annotations,
        "target_annotations": n_items * study.overlap,
        "percent": round(100 * n_annotations / (n_items * study.overlap), 1) if n_items else 0.0,
        "participants_by_stage": [
            (label, stages.get(value, 0)) for value, label in Participant.Stage.choices
        ],
        "n_participants": sum(stages.values()),
        "active_assignments": Assignment.objects.filter(
            item__study=study, state=Assignment.State.ACTIVE
        ).count(),
        "checks": checks,
    }


def study_participant_rows(*, study: Study) -> list[Participant]:
    return list(Participant.objects.filter(study=study).select_related("user").order_by("id"))


def study_label_rows(*, study: Study) -> list[tuple[int, str, bool, int | None]]:
    """Long-format labels of regular items: (item_id, annotator_id, has_failure, first_failure_step)."""
    rows = (
        Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR)
        .select_related("participant")
        .order_by("item_id", "participant_id")
    )
    return [
        (a.item_id, a.participant.label, a.has_failure, first_failure_step(a.failures))
        for a in rows
    ]


EXPORT_FIELDS = (
    "study_id",
    "item_id",
    "item_kind",
    "source_example_id",
    "generation_id",
    "generator",
    "participant_id",
    "prolific_pid",
    "username",
    "has_failure",
    "n_failures",
    "failures",
    "first_failure_l2_step",
    "comments",
    "wall_ms",
    "active_ms",
    "served_at",
    "submitted_at",
    "expected_has_failure",
    "attention_passed",
    "participant_attention_failures",
    "participant_stage",
)


def study_export_rows(*, study: Study) -> Iterator[dict]:
    """Every annotation of the study with participant ids, timings, attention results and
    failures with their step links (failures as ``[{description, l1_steps, l2_steps}]``)."""
    qs = (
        Annotation.objects.filter(item__study=study)
        .select_related(
            "participant__user",
            "item__generation__procedure",
            "item__generation__generator",
            "assignment",
        )
        .order_by("item__kind", "item_id", "participant_id")
    )
    for a in qs.iterator(chunk_size=500):
        item = a.item
        expected = item.expected_has_failure
        yield {
            "study_id": study.pk,
            "item_id": item.pk,
            "item_kind": item.kind,
            "source_example_id": item.generation.procedure.source_example_id,
            "generation_id": item.generation_id,
            "generator": item.generation.generator.name,
            "participant_id": a.participant_id,
            "prolific_pid": a.participant.prolific_pid,
            "username": a.participant.user.get_username() if a.participant.user_id else "",
            "has_failure": a.has_failure,
            "n_failures": len(a.failures),
            "failures": a.failures,
            "first_failure_l2_step": first_failure_step(a.failures),
            "comments": a.comments,
            "wall_ms": a.wall_ms,
            "active_ms": a.active_ms,
            "served_at": a.assignment.served_at.isoformat(),
            "submitted_at": a.submitted_at.isoformat(),
            "expected_has_failure": expected,
            "attention_passed": (a.has_failure == expected)
            if item.kind != StudyItem.Kind.REGULAR and expected is not None
            else None,
            "participant_attention_failures": a.participant.attention_failures,
            "participant_stage": a.participant.stage,
        }
