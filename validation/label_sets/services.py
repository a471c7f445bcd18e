"""Writes of label sets: create one from a file, a study's people's labels, a judge's verdicts, or
a mix (one transaction: a refused file leaves nothing behind), and delete one.

Labels from the app use the generation's id as ``item_id`` and its generator's name as
``group``, so a file meant to be mixed with a study or a judge names items by generation id.
"""

from __future__ import annotations

from django.db import transaction

from annotation.label_set_file import HUMAN, JUDGE, Label, LabelSetError, parse_label_set
from annotation.label_set_file import LabelSet as ParsedLabelSet
from annotation.models import Annotation, Study, StudyItem
from judging.models import Judge
from judging.selectors.judgments import score_records
from validation.label_sets.adapters import require_binary
from validation.models import LabelSet, LabelSetRow


def _study_labels(study: Study) -> list[Label]:
    """The people's has_failure of a critical-failure study's regular items, one per
    annotator and item."""
    if study.form_type != "critical_failure":
        raise LabelSetError(
            f"study {study.name!r} is a {study.form_type} study; label sets take the "
            "has_failure of a critical-failure study"
        )
    rows = (
        Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR)
        .select_related("participant", "item__generation__generator")
        .order_by("item_id", "id")
    )
    return [
        Label(
            str(a.item.generation_id),
            a.participant.label,
            HUMAN,
            "1" if a.has_failure else "0",
            a.item.generation.generator.name,
            "",
            0,
        )
        for a in rows.iterator(chunk_size=2000)
    ]


def _judge_labels(judge: Judge) -> list[Label]:
    """The judge's has_failure on every generation it scored (parse failures left out)."""
    return [
        Label(
            str(r["generation_id"]),
            judge.name,
            JUDGE,
            "1" if r["has_failure"] else "0",
            r["generator"],
            "",
            0,
        )
        for r in score_records(judge=judge, generator=None, run=None, dataset=None)
        if not r["parse_failed"]
    ]


def _merge(parts: list[list[Label]]) -> ParsedLabelSet:
    """One label set from several sources; a source labelling an item twice is refused."""
    seen: dict[tuple[str, str], Label] = {}
    out = []
    for labels in parts:
        for x in labels:
            if (x.item_id, x.source) in seen:
                where = f"line {x.line}: " if x.line else ""
                raise LabelSetError(
                    f"{where}item {x.item_id!r} is labelled by {x.source!r} both in the file "
                    "and in the study or judge chosen"
                )
            seen[(x.item_id, x.source)] = x
            out.append(x)
    if not out:
        raise LabelSetError("no labels: upload a file, or choose a study or a judge with labels")
    return ParsedLabelSet(labels=out, file_format="")


def label_set_create(
    *,
    name: str,
    data: bytes | None = None,
    filename: str = "",
    study: Study | None = None,
    judge: Judge | None = None,
    annotator_kind: str = "crowd",
    description: str = "",
    user=None,
    max_bytes: int,
    binary: bool = False,
) -> LabelSet:
    """A stored label set. ``LabelSetError`` (nothing stored) for a refused file or mix, and,
    with ``binary``, for a label other than 0 or 1 (line and column named)."""
    parts, file_format = [], ""
    if data is not None:
        parsed = parse_label_set(data, name=filename, max_bytes=max_bytes)
        parts.append(parsed.labels)
        file_format = parsed.file_format
    if study is not None:
        parts.append(_study_labels(study))
    if judge is not None:
        parts.append(_judge_labels(judge))
    merged = _merge(parts)
    if binary:
        require_binary(merged.labels, what="A critical-failure label set (PPI)")
    with transaction.atomic():
        label_set = LabelSet.objects.create(
            name=name,
            description=description,
            annotator_kind=annotator_kind,
            uploaded_by=user if getattr(user, "is_authenticated", False) else None,
            filename=filename if data is not None else "",
            file_format=file_format,
            file_bytes=len(data) if data is not None else 0,
            study=study,
            judge=judge,
            counts=merged.counts(),
        )
        LabelSetRow.objects.bulk_create(
            [
                LabelSetRow(
                    label_set=label_set,
                    item_id=x.item_id,
                    source=x.source,
                    kind=x.kind,
                    label=x.label,
                    group=x.group,
                    text=x.text,
                    line=x.line,
                )
                for x in merged.labels
            ],
            batch_size=2000,
        )
    return label_set


def label_set_delete(*, label_set: LabelSet) -> None:
    with transaction.atomic():
        label_set.delete()
