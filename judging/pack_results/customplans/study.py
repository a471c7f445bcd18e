"""Reads for the CustomPlans results page's human study: the answers of a study with the
CustomPlans form (annotation app) as :class:`~judging.pack_results.common.Instance`
rows, one per rated generation, by the pure
:func:`judging.pack_results.customplans.tables.item_instances`.

A rated generation pairs with other generators' on its procedure (``dataset id:source id``,
as scored instances do). The hint's metadata (``constraint``, ``expertise``,
``critical_type``) and a ``worked_example`` mark come from the study item's context when it
has them, else from the procedure's gold (the fields a CustomPlans line imports with).
"""

from __future__ import annotations

from typing import Any

from annotation.models import Annotation, Study, StudyItem
from judging.pack_results.common import Instance
from judging.pack_results.customplans.tables import SLICES, item_instances
from judging.pack_results.reads import SelectionError

FORM_TYPE = "customplans"
ATTRS = (*SLICES, "worked_example")


def customplans_studies() -> list[Study]:
    """Studies with the CustomPlans form, newest first (for the chooser)."""
    return list(Study.objects.filter(form_type=FORM_TYPE).order_by("-created_at", "-id"))


def study_reader(study_id: int) -> tuple[list[Instance], dict[str, Any]]:
    """The page's reader (``PackPage.study_instances``): :class:`SelectionError` naming
    ``study`` when there is no such study or it does not use the CustomPlans form."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise SelectionError("study", f"no study {study_id}")
    if study.form_type != FORM_TYPE:
        raise SelectionError(
            "study", f"study {study_id} uses the {study.form_type} form, not the CustomPlans form"
        )
    return study_instances(study=study)


def study_instances(*, study: Study) -> tuple[list[Instance], dict[str, Any]]:
    """(instances, facts: study id and name, annotations read and left out)."""
    rows = (
        Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR)
        .values(
            "label",
            "item__context",
            "item__generation__generator__name",
            "item__generation__procedure__dataset_id",
            "item__generation__procedure__source_example_id",
            "item__generation__procedure__payload",
        )
        .order_by("item_id", "id")
    )
    records = []
    marks: dict[str, str] = {}
    for row in rows:
        label = row["label"] or {}
        context = row["item__context"] or {}
        gold = row["item__generation__procedure__payload"] or {}
        item = (
            f"{row['item__generation__procedure__dataset_id']}:"
            f"{row['item__generation__procedure__source_example_id']}"
        )
        meta = {a: context.get(a, gold.get(a)) for a in ATTRS}
        if meta["worked_example"]:
            marks[item] = str(meta["worked_example"])
        records.append(
            {
                "generator": row["item__generation__generator__name"],
                "item": item,
                "q1": label.get("q1"),
                "q2": label.get("q2"),
                **{s: meta[s] for s in SLICES},
            }
        )
    instances, unreadable = item_instances(records)
    instances = [
        Instance(
            i.generator,
            i.item,
            i.pack,
            i.metrics,
            i.breakdown,
            {**i.attrs, **({"worked_example": marks[i.item]} if i.item in marks else {})},
        )
        for i in instances
    ]
    facts = {
        "id": study.pk,
        "name": study.name,
        "n_annotations": len(records),
        "n_unreadable": unreadable,
    }
    return instances, facts
