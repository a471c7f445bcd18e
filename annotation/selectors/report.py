"""Reads for the study agreement report, the adjudication queue and the label exports.

Only **regular** items count: training, qualification and planted attention items have a known
answer and are left out of every number here.

The labels (``"no failure"`` / ``"failure"``) and the *first-failure location* come from the
submitted annotations. The first-failure location of an annotation is the earliest L2 (generated)
step linked to any of its failures (:func:`annotation.labels.first_failure_step`); the location
variable is ``"no failure"``, ``"failure @ step N"``, or ``"failure"`` when the failures link only
L1 steps. Two annotators agree on it only when they agree on the label *and* on that step.

Every read is a fixed number of queries (``values_list``; no per-item query), so a study of
thousands of items renders quickly; the report itself is cached per study until a new
annotation arrives (:func:`report_signature`).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import NamedTuple

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q
from django.db.models.expressions import RawSQL

from annotation.agreement_report import LabelRow, build_report
from annotation.labels import first_failure_step
from annotation.models import (
    Adjudication,
    Annotation,
    AttentionCheckResult,
    Participant,
    Study,
    StudyItem,
)
from core.errors import NON_FIELD_KEY, FieldRefusal

NO_FAILURE = "no failure"
FAILURE = "failure"
CATEGORIES = (NO_FAILURE, FAILURE)
GROUP_COLUMNS = ("topic", "generator")
NO_TOPIC = "(no topic)"
TIE = "tie"
GOLD_KINDS = ("qualification", "attention", "training")
GOLD_KEYS = ("generation_id", "source_example_id")
REPORT_CACHE_SECONDS = 24 * 3600


def label_text(has_failure: bool) -> str:
    return FAILURE if has_failure else NO_FAILURE


def participant_label(prolific_pid: str, user_id: int | None) -> str:
    """The same text as :attr:`Participant.label`, from values (no object needed)."""
    return prolific_pid or f"user-{user_id}"


class StudyLabel(NamedTuple):
    item_id: int
    participant_id: int
    annotator: str
    has_failure: bool
    first_step: int | None
    active_ms: int
    topic: str
    generator: str


# The first-failure location computed by PostgreSQL (decoding 20,000 ``failures`` JSON values
# in Python costs more than the whole report); other databases use the Python definition.
FIRST_STEP_SQL = (
    "(SELECT MIN(s::int) FROM jsonb_array_elements(annotation_annotation.failures) f,"
    " jsonb_array_elements_text(f->'l2_steps') s)"
)


def study_labels(*, study: Study) -> list[StudyLabel]:
    """Every submitted label of the study's regular items, in one query."""
    qs = Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR).order_by(
        "item_id", "participant_id"
    )
    in_sql = connection.vendor == "postgresql"
    if in_sql:
        qs = qs.annotate(first_step=RawSQL(FIRST_STEP_SQL, []))
    rows = qs.values_list(
        "item_id",
        "participant_id",
        "participant__prolific_pid",
        "participant__user_id",
        "has_failure",
        "first_step" if in_sql else "failures",
        "active_ms",
        "item__generation__procedure__topic__name",
        "item__generation__generator__name",
    )
    annotators: dict[tuple, str] = {}
    out = []
    for item_id, pid, ppid, uid, has_failure, step, active_ms, topic, generator in rows:
        name = annotators.get((ppid, uid))
        if name is None:
            name = annotators[(ppid, uid)] = participant_label(ppid, uid)
        out.append(
            StudyLabel(
                item_id,
                pid,
                name,
                has_failure,
                step if in_sql else first_failure_step(step or []),
                active_ms,
                topic or NO_TOPIC,
                generator,
            )
        )
    return out


def report_signature(*, study: Study) -> str:
    """Changes whenever a regular item gets a new label or an attention check is recorded:
    the report's cache key (two small aggregate queries)."""
    agg = Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR).aggregate(
        n=Count("id"), last=Max("id")
    )
    checks = AttentionCheckResult.objects.filter(participant__study=study).aggregate(last=Max("id"))
    return f"{agg['n']}-{agg['last'] or 0}-{checks['last'] or 0}"


def study_report(*, study: Study, n_resamples: int = 1000, use_cache: bool = True) -> dict:
    """The agreement report of a study (see :func:`annotation.agreement_report.build_report`)
    plus ``annotators`` (the annotator table) and ``signature``. Cached until a label arrives."""
    signature = report_signature(study=study)
    key = f"annotation:report:{study.pk}:{signature}:{n_resamples}"
    if use_cache:
        cached = cache.get(key)
        if cached is not None:
            return cached
    labels = study_labels(study=study)
    report = build_report(
        _report_rows(labels),
        categories=CATEGORIES,
        group_columns=GROUP_COLUMNS,
        with_location=True,
        n_resamples=n_resamples,
    )
    report["annotators"] = _annotator_table(study=study, labels=labels, report=report)
    report["signature"] = signature
    report["study_id"] = study.pk
    if use_cache:
        cache.set(key, report, REPORT_CACHE_SECONDS)
    return report


class _ReportRow(NamedTuple):
    """What :func:`build_report` reads of a :class:`LabelRow` (a tuple: 20,000 of them are
    built per report, and a frozen dataclass costs ten times as much)."""

    item_id: str
    annotator_id: str
    label: str
    first_failure_step: int | None
    groups: dict


def _report_rows(labels: list[StudyLabel]) -> list[LabelRow]:
    groups: dict[tuple[str, str], dict] = {}
    rows = []
    for x in labels:
        group = groups.get((x.topic, x.generator))
        if group is None:
            group = groups[(x.topic, x.generator)] = {"topic": x.topic, "generator": x.generator}
        rows.append(
            _ReportRow(
                str(x.item_id),
                x.annotator,
                FAILURE if x.has_failure else NO_FAILURE,
                x.first_step,
                group,
            )
        )
    return rows  # type: ignore[return-value]  # duck-typed LabelRow


def _annotator_table(*, study: Study, labels: list[StudyLabel], report: dict) -> list[dict]:
    """Items done, median active time, attention-check pass rate, agreement with the others."""
    done: Counter = Counter()
    active: dict[int, list[int]] = defaultdict(list)
    for x in labels:
        done[x.participant_id] += 1
        active[x.participant_id].append(x.active_ms)
    checks = {
        pid: (total, passed)
        for pid, total, passed in AttentionCheckResult.objects.filter(
            participant__study=study, kind=AttentionCheckResult.Kind.PLANTED
        )
        .values("participant_id")
        .annotate(total=Count("id"), passed=Count("id", filter=Q(passed=True)))
        .values_list("participant_id", "total", "passed")
    }
    loo = {r["annotator_id"]: r for r in report["leave_one_out"]["annotators"]}
    participants = Participant.objects.filter(study=study).order_by("id")
    out = []
    for pid, ppid, uid, stage in participants.values_list("id", "prolific_pid", "user_id", "stage"):
        if not done[pid] and pid not in checks:
            continue
        name = participant_label(ppid, uid)
        total, passed = checks.get(pid, (0, 0))
        agreement = loo.get(name)
        out.append(
            {
                "participant_id": pid,
                "annotator_id": name,
                "stage": stage,
                "items_done": done[pid],
                "median_active_seconds": (
                    {"value": statistics.median(active[pid]) / 1000}
                    if active[pid]
                    else {"value": None, "undefined": "no item submitted"}
                ),
                "attention": (
                    {"value": passed / total, "passed": passed, "total": total}
                    if total
                    else {"value": None, "undefined": "no attention check served yet"}
                ),
                "agreement_with_others": (
                    agreement["agreement"]
                    if agreement
                    else {"value": None, "undefined": "no regular item submitted"}
                ),
                "n_compared": agreement["n_compared"] if agreement else 0,
            }
        )
    return out


# --- the adjudication queue ------------------------------------------------------------------


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


# --- exports ---------------------------------------------------------------------------------

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


def regular_item_annotations(*, study: Study) -> dict[int, list[dict]]:
    """``{item id: each annotator's label of that regular item}`` (annotator id as the study
    shows it, failures, comments, a form type's answer), in participant order; one query."""
    annotations: dict[int, list[dict]] = defaultdict(list)
    for item_id, ppid, uid, has_failure, failures, comments, label in (
        Annotation.objects.filter(item__study=study, item__kind=StudyItem.Kind.REGULAR)
        .order_by("item_id", "participant_id")
        .values_list(
            "item_id",
            "participant__prolific_pid",
            "participant__user_id",
            "has_failure",
            "failures",
            "comments",
            "label",
        )
    ):
        annotations[item_id].append(
            {
                "annotator_id": participant_label(ppid, uid),
                "has_failure": has_failure,
                "failures": failures or [],
                "first_failure_l2_step": first_failure_step(failures or []),
                "comments": comments,
                "label": label or {},  # a form type's answer (annotation.form_types)
            }
        )
    return annotations


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
