"""Reads for adjudication: the queue of items whose annotators disagree, and one item with its
labels and its adjudication. Regular items only, as in the report
(:mod:`annotation.selectors.report`)."""

from __future__ import annotations

from collections import defaultdict

from annotation.models import Adjudication, Annotation, Study, StudyItem
from annotation.selectors.report import StudyLabel, label_text, study_labels


def _by_item(labels: list[StudyLabel]) -> dict[int, list[StudyLabel]]:
    grouped: dict[int, list[StudyLabel]] = defaultdict(list)
    for x in labels:
        grouped[x.item_id].append(x)
    return grouped


def adjudication_queue(*, study: Study, include_location: bool = False) -> list[dict]:
    """Items whose annotators disagree on ``has_failure`` (and, with ``include_location``, items
    where all say "failure" but the first failing L2 step differs).

    Order: not yet adjudicated first; then the most evenly split items (a 2–1 split before a
    3–1 split); then items with more labels; then item id. Two queries.
    """
    adjudicated = dict(
        Adjudication.objects.filter(item__study=study).values_list("item_id", "has_failure")
    )
    queue = []
    for item_id, group in _by_item(study_labels(study=study)).items():
        if len(group) < 2:
            continue
        n_failure = sum(1 for x in group if x.has_failure)
        n = len(group)
        if 0 < n_failure < n:
            reason = "label"
        elif include_location and n_failure == n and len({x.first_step for x in group}) > 1:
            reason = "location"
        else:
            continue
        queue.append(
            {
                "item_id": item_id,
                "reason": reason,
                "n_labels": n,
                "n_failure": n_failure,
                "n_no_failure": n - n_failure,
                "first_steps": [x.first_step for x in group],
                "topic": group[0].topic,
                "generator": group[0].generator,
                "adjudicated": item_id in adjudicated,
                "adjudicated_label": (
                    label_text(adjudicated[item_id]) if item_id in adjudicated else None
                ),
                "split": min(n_failure, n - n_failure) / n if reason == "label" else 0.0,
            }
        )
    queue.sort(key=lambda q: (q["adjudicated"], -q["split"], -q["n_labels"], q["item_id"]))
    return queue


def adjudication_item(*, study: Study, item_id: int) -> StudyItem | None:
    """A regular item of the study with its procedure and generation (None otherwise)."""
    return (
        StudyItem.objects.select_related("generation__procedure__topic", "generation__generator")
        .filter(study=study, pk=item_id, kind=StudyItem.Kind.REGULAR)
        .first()
    )


def item_annotations(*, item: StudyItem) -> list[Annotation]:
    return list(
        Annotation.objects.filter(item=item)
        .select_related("participant")
        .order_by("participant_id")
    )


def item_adjudication(*, item: StudyItem) -> Adjudication | None:
    return Adjudication.objects.select_related("adjudicator").filter(item=item).first()
