"""Reads for the label exports of a study: one row per regular item (each annotator's label,
the majority, the adjudicated label) and the adjudicated labels as known-answer (gold) items.
Each is a fixed number of queries whatever the study's size."""

from __future__ import annotations

from collections.abc import Iterator

from annotation.models import Adjudication, Study, StudyItem
from annotation.selectors.report import label_text, regular_item_annotations
from core.errors import NON_FIELD_KEY, FieldRefusal

TIE = "tie"
GOLD_KINDS = ("qualification", "attention", "training")
GOLD_KEYS = ("generation_id", "source_example_id")
ITEM_EXPORT_FIELDS = (
    "study_id",
    "item_id",
    "generation_id",
    "generation_b_id",
    "form_type",
    "source_example_id",
    "topic",
    "generator",
    "n_labels",
    "n_failure",
    "n_no_failure",
    "labels",
    "first_failure_l2_steps",
    "majority",
    "majority_tie",
    "adjudicated_has_failure",
    "adjudicated_failures",
    "adjudication_note",
    "adjudicated_by",
    "adjudicated_at",
)


def majority_of(labels: list[bool]) -> tuple[str, bool]:
    """``("failure" | "no failure" | "tie" | "", is_tie)``; ``""`` when nobody labelled the item."""
    if not labels:
        return "", False
    yes = sum(1 for x in labels if x)
    no = len(labels) - yes
    if yes == no:
        return TIE, True
    return label_text(yes > no), False


def study_item_label_rows(*, study: Study) -> Iterator[dict]:
    """One row per regular item: each annotator's label (with failures and comments), the
    majority (ties explicit: ``majority == "tie"`` and ``majority_tie``), the adjudicated label.
    Three queries whatever the study's size."""
    items = (
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)
        .order_by("position", "id")
        .values_list(
            "id",
            "generation_id",
            "generation__procedure__source_example_id",
            "generation__procedure__topic__name",
            "generation__generator__name",
            "generation_b_id",
        )
    )
    annotations = regular_item_annotations(study=study)
    adjudications = {
        row[0]: row
        for row in Adjudication.objects.filter(item__study=study).values_list(
            "item_id", "has_failure", "failures", "note", "adjudicator__username", "updated_at"
        )
    }
    for item_id, generation_id, source_example_id, topic, generator, generation_b_id in items:
        labels = annotations.get(item_id, [])
        majority, tie = majority_of([x["has_failure"] for x in labels])
        adj = adjudications.get(item_id)
        n_failure = sum(1 for x in labels if x["has_failure"])
        yield {
            "study_id": study.pk,
            "item_id": item_id,
            "generation_id": generation_id,
            "generation_b_id": generation_b_id,
            "form_type": study.form_type,
            "source_example_id": source_example_id,
            "topic": topic or "",
            "generator": generator,
            "n_labels": len(labels),
            "n_failure": n_failure,
            "n_no_failure": len(labels) - n_failure,
            "labels": labels,
            "first_failure_l2_steps": {
                x["annotator_id"]: x["first_failure_l2_step"] for x in labels
            },
            "majority": majority,
            "majority_tie": tie,
            "adjudicated_has_failure": adj[1] if adj else None,
            "adjudicated_failures": adj[2] if adj else None,
            "adjudication_note": adj[3] if adj else "",
            "adjudicated_by": (adj[4] or "") if adj else "",
            "adjudicated_at": adj[5].isoformat() if adj else "",
        }


GOLD_FIELDS = (
    "generation_id",
    "source_example_id",
    "kind",
    "expected_has_failure",
    "explanation",
    "failures",
    "note",
    "study_id",
    "item_id",
)


def gold_fields(*, key: str) -> tuple[str, ...]:
    """The gold columns for one key: ``create_study --known-items`` wants exactly one of
    ``generation_id`` and ``source_example_id``."""
    other = "source_example_id" if key == "generation_id" else "generation_id"
    return tuple(f for f in GOLD_FIELDS if f != other)


def study_gold_rows(
    *, study: Study, kind: str = "qualification", key: str = "generation_id"
) -> Iterator[dict]:
    """Adjudicated labels as known-answer items, in the JSONL shape that
    :func:`annotation.known_items.parse_known_items` (``create_study --known-items``) reads:
    ``{generation_id | source_example_id, kind, expected_has_failure, explanation}``, plus the
    adjudicated ``failures``, ``note``, ``study_id`` and ``item_id`` (ignored when read back).
    An unknown ``kind`` or ``key`` is a :class:`core.errors.FieldRefusal` (the API answers 400)."""
    if kind not in GOLD_KINDS:
        refused = f"kind must be one of {', '.join(GOLD_KINDS)}, not {kind!r}"
        raise FieldRefusal({NON_FIELD_KEY: refused})
    if key not in GOLD_KEYS:
        raise FieldRefusal(
            {NON_FIELD_KEY: f"key must be one of {', '.join(GOLD_KEYS)}, not {key!r}"}
        )
    rows = (
        Adjudication.objects.filter(item__study=study)
        .order_by("item__position", "item_id")
        .values_list(
            "item_id",
            "item__generation_id",
            "item__generation__procedure__source_example_id",
            "has_failure",
            "failures",
            "note",
        )
    )
    for item_id, generation_id, source_example_id, has_failure, failures, note in rows:
        explanation = note.strip() or "; ".join(
            f.get("description", "") for f in failures if f.get("description")
        )
        row = {
            "generation_id": generation_id,
            "source_example_id": source_example_id,
            "kind": kind,
            "expected_has_failure": has_failure,
            "explanation": explanation,
            "failures": failures,
            "note": note,
            "study_id": study.pk,
            "item_id": item_id,
        }
        yield {f: row[f] for f in gold_fields(key=key)}
