"""Reads of the annotation app: what a participant may see, study progress, label rows and exports.
Who a request of the annotator flow comes from (the participant, their assignment):
:mod:`annotation.selectors.annotator`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from django.db import router
from django.db.models import Count, Q, QuerySet

from annotation import prepared
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
from annotation.selectors.forms import study_form
from core.prepared import model_instances

# What an item page or a save never shows: the mined source document, the raw model output and
# scores. Left out of the hot reads (a procedure's source text is typically 2.5-6 KB).
ITEM_UNUSED_FIELDS = (
    "generation__procedure__source_text",
    "generation__model_completion",
    "generation__scores",
)
ASSIGNMENT_UNUSED_FIELDS = tuple(f"item__{name}" for name in ITEM_UNUSED_FIELDS)


def study_item_from_row(row: tuple) -> StudyItem:
    """An item with its generation and procedure from a row of :data:`prepared.ITEM_FULL_PATHS`
    (:data:`prepared.ITEM_FULL`, the pool's head)."""
    item, generation, procedure = model_instances(
        router.db_for_read(StudyItem), row, prepared.ITEM_FULL_PARTS
    )
    generation.procedure = procedure
    item.generation = generation
    return item


def study_item_for_page(*, item_id: int) -> StudyItem | None:
    """An item with its generation and procedure, as the item page shows it (one query)."""
    rows = prepared.ITEM_FULL.rows(item_id=item_id)
    return study_item_from_row(rows[0]) if rows else None


def assignment_draft(*, assignment: Assignment) -> dict:
    draft = Draft.objects.filter(assignment=assignment).values_list("data", flat=True).first()
    return draft or {}


def assignment_saved_state(*, assignment: Assignment) -> dict:
    """What the item page restores: the draft, or nothing for an assignment just claimed."""
    return {} if getattr(assignment, "is_new", False) else assignment_draft(assignment=assignment)


def participant_open_assignment(*, participant_id: int) -> Assignment | None:
    """The participant's open assignment, with its item as the page shows it."""
    return (
        Assignment.objects.filter(participant_id=participant_id, state=Assignment.State.ACTIVE)
        .select_related("item__generation__procedure")
        .defer(*ASSIGNMENT_UNUSED_FIELDS)
        .order_by("served_at")
        .first()
    )


def participant_unfinished_assignments(*, participant_id: int) -> list[Assignment]:
    """The participant's open and returned-to-the-pool assignments: open first, newest first."""
    return list(
        Assignment.objects.filter(
            participant_id=participant_id,
            state__in=[Assignment.State.ACTIVE, Assignment.State.EXPIRED],
        )
        .select_related("item__generation__procedure")
        .defer(*ASSIGNMENT_UNUSED_FIELDS)
        .order_by("state", "-served_at")
    )


def next_known_item(*, study: Study, participant: Participant, kind: str) -> StudyItem | None:
    """The first qualification (of the participant's current attempt), attention or silent
    gold item of the study this participant never had."""
    items = study.items.filter(kind=kind)
    if kind == StudyItem.Kind.QUALIFICATION:
        items = items.filter(attempt=participant.qualification_attempt)
    return items.exclude(assignments__participant=participant).order_by("position", "id").first()


def study_has_qualification(*, study: Study, attempt: int = 1) -> bool:
    """Whether the study has a qualification stage (qualification items); with ``attempt=2``,
    whether it has the second set that a participant who fails once gets to try."""
    return study.items.filter(kind=StudyItem.Kind.QUALIFICATION, attempt=attempt).exists()


def qualification_answers(*, participant: Participant) -> tuple[int, int]:
    """(answered as expected, answered) over the qualification items of the participant's
    current attempt."""
    answers = list(
        Annotation.objects.filter(
            participant=participant,
            item__kind=StudyItem.Kind.QUALIFICATION,
            item__attempt=participant.qualification_attempt,
        ).values_list("has_failure", "item__expected_has_failure")
    )
    return sum(1 for got, want in answers if got == want), len(answers)


def qualification_missed(*, participant: Participant, attempt: int = 1) -> list[StudyItem]:
    """The qualification items of ``attempt`` the participant answered otherwise than expected
    (what the training shows again before the second attempt), with what they answered."""
    rows = (
        Annotation.objects.filter(
            participant=participant, item__kind=StudyItem.Kind.QUALIFICATION, item__attempt=attempt
        )
        .select_related("item__generation__procedure")
        .defer(*(f"item__{name}" for name in ITEM_UNUSED_FIELDS))
        .order_by("item__position", "item_id")
    )
    form = study_form(study=participant.study)
    missed = []
    for annotation in rows:
        item = annotation.item
        passed, _detail = form.known_answer(
            answer=annotation.label or {},
            has_failure=annotation.has_failure,
            expected_label=item.expected_label,
            expected_has_failure=item.expected_has_failure,
        )
        if not passed:
            item.answered_has_failure = annotation.has_failure
            if not form.is_critical_failure:  # the form type's answers in words
                item.answered_text = "; ".join(
                    form.type.describe(annotation.label or {}, config=form.config)
                )
                item.expected_text = form.type.describe_expected(
                    item.expected_label or {}, config=form.config
                )
            missed.append(item)
    return missed


def training_items(*, study: Study) -> list[StudyItem]:
    """The worked examples; for a form type other than critical failure each carries its
    expected answer in words (``expected_text``)."""
    items = list(
        study.items.filter(kind=StudyItem.Kind.TRAINING)
        .select_related("generation__procedure", "generation_b")
        .order_by("position", "id")
    )
    form = study_form(study=study)
    if not form.is_critical_failure:
        for item in items:
            item.expected_text = form.type.describe_expected(
                item.expected_label or {}, config=form.config
            )
    return items


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
    "label",
    "generation_b_id",
    "wall_ms",
    "active_ms",
    "served_at",
    "submitted_at",
    "expected_has_failure",
    "attention_passed",
    "participant_attention_failures",
    "participant_stage",
)


def study_export_queryset(*, study: Study) -> QuerySet[Annotation]:
    """The annotations a study's export writes, in its order (item kind, item, participant);
    :func:`study_export_rows` reads them in Python, :mod:`annotation.selectors.export_sql` has
    PostgreSQL write the same lines."""
    return Annotation.objects.filter(item__study=study).order_by(
        "item__kind", "item_id", "participant_id"
    )


def study_export_rows(*, study: Study) -> Iterator[dict]:
    """Every annotation of the study with participant ids, timings, attention results and
    failures with their step links (failures as ``[{description, l1_steps, l2_steps}]``).

    One query read through a server-side cursor, a chunk at a time, and only the columns the
    export writes (no model objects, none of a procedure's or generation's texts), so a
    study of a million labels streams in flat memory."""
    regular = StudyItem.Kind.REGULAR
    qs = study_export_queryset(study=study).values_list(
        "item_id",
        "item__kind",
        "item__generation__procedure__source_example_id",
        "item__generation_id",
        "item__generation__generator__name",
        "participant_id",
        "participant__prolific_pid",
        "participant__user__username",
        "has_failure",
        "failures",
        "comments",
        "label",
        "item__generation_b_id",
        "wall_ms",
        "active_ms",
        "assignment__served_at",
        "submitted_at",
        "item__expected_has_failure",
        "participant__attention_failures",
        "participant__stage",
    )
    for (
        item_id,
        kind,
        source_example_id,
        generation_id,
        generator,
        participant_id,
        prolific_pid,
        username,
        has_failure,
        failures,
        comments,
        label,
        generation_b_id,
        wall_ms,
        active_ms,
        served_at,
        submitted_at,
        expected,
        attention_failures,
        stage,
    ) in qs.iterator(chunk_size=2000):
        yield {
            "study_id": study.pk,
            "item_id": item_id,
            "item_kind": kind,
            "source_example_id": source_example_id,
            "generation_id": generation_id,
            "generator": generator,
            "participant_id": participant_id,
            "prolific_pid": prolific_pid,
            "username": username or "",
            "has_failure": has_failure,
            "n_failures": len(failures),
            "failures": failures,
            "first_failure_l2_step": first_failure_step(failures),
            "comments": comments,
            "label": label,  # a form type's answer (annotation.form_types); {} for failures
            "generation_b_id": generation_b_id,
            "wall_ms": wall_ms,
            "active_ms": active_ms,
            "served_at": served_at.isoformat(),
            "submitted_at": submitted_at.isoformat(),
            "expected_has_failure": expected,
            "attention_passed": (has_failure == expected)
            if kind != regular and expected is not None
            else None,
            "participant_attention_failures": attention_failures,
            "participant_stage": stage,
        }
