"""Reads for the study agreement report: a study's labels, the report and its annotator table.

The adjudication queue (:mod:`annotation.selectors.adjudication`) and the label exports
(:mod:`annotation.selectors.exports`) read the same labels through :func:`study_labels` and
:func:`regular_item_annotations`.

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
from collections.abc import Callable
from typing import NamedTuple

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q
from django.db.models.expressions import RawSQL

from annotation.agreement_report import build_report
from annotation.label_file import LabelRow
from annotation.labels import first_failure_step
from annotation.models import Annotation, AttentionCheckResult, Participant, Study, StudyItem

NO_FAILURE = "no failure"
FAILURE = "failure"
CATEGORIES = (NO_FAILURE, FAILURE)
GROUP_COLUMNS = ("topic", "generator")
NO_TOPIC = "(no topic)"
REPORT_CACHE_SECONDS = 24 * 3600
# A study with more labels than this has its report computed by a worker
# (``annotation.study_report_compute``), never in a request; one computation per study at a time.
REPORT_IN_REQUEST_MAX_LABELS = 50_000
REPORT_LOCK_SECONDS = 15 * 60


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


def cached_study_report(
    *,
    study: Study,
    name: str,
    n_resamples: int,
    use_cache: bool,
    build: Callable[[str], dict],
    signature: str | None = None,
) -> dict:
    """A report of ``study`` kept in the cache until a regular item gets a new label or an
    attention check is recorded (:func:`report_signature`); ``build(signature)`` makes it when
    the cache has none (or ``use_cache`` is off). ``signature``: the one just read, if any."""
    signature = signature or report_signature(study=study)
    key = _report_key(study, signature, name, n_resamples)
    if use_cache and (cached := cache.get(key)) is not None:
        return cached
    report = build(signature)
    if use_cache:
        cache.set(key, report, REPORT_CACHE_SECONDS)
    return report


def _report_key(study: Study, signature: str, name: str, n_resamples: int) -> str:
    return f"annotation:{name}:{study.pk}:{signature}:{n_resamples}"


def report_lock_key(study_id: int) -> str:
    return f"annotation:report-computing:{study_id}"


def latest_report_key(study_id: int) -> str:
    return f"annotation:report-latest:{study_id}"


class ReadyReport(NamedTuple):
    """What the report page can show now: ``report``, the newest report there is (``None``
    before the first is computed; of fewer labels than stored while ``computing``), and
    ``computing``, whether a worker is computing the report of the labels stored now."""

    report: dict | None
    computing: bool
    n_labels: int


def ready_study_report(*, study: Study, enqueue: Callable[[int], None]) -> ReadyReport:
    """The study's report when it is in the cache or small enough to compute now
    (≤ :data:`REPORT_IN_REQUEST_MAX_LABELS` labels). Otherwise the last report computed (or
    none) with ``computing``, after ``enqueue(study.pk)`` starts the computation unless one
    is already running for this study (a cache lock taken with ``add``, released when the
    computation ends)."""
    signature = report_signature(study=study)
    n_labels = _n_labels(signature)
    if n_labels <= REPORT_IN_REQUEST_MAX_LABELS:
        return ReadyReport(study_report(study=study, signature=signature), False, n_labels)
    return _worker_report(study, signature, enqueue)


def _n_labels(signature: str) -> int:
    return int(signature.split("-", 1)[0])


def _worker_report(study: Study, signature: str, enqueue: Callable[[int], None]) -> ReadyReport:
    """A large study's report: the one of ``signature`` when a worker has stored it, else the
    last one (or none) while a worker computes it (enqueued once per study at a time)."""
    n_labels = _n_labels(signature)
    if (cached := cache.get(_report_key(study, signature, "report", 1000))) is not None:
        return ReadyReport(cached, False, n_labels)
    if cache.add(report_lock_key(study.pk), signature, REPORT_LOCK_SECONDS):
        enqueue(study.pk)
    return ReadyReport(cache.get(latest_report_key(study.pk)), True, n_labels)


def listed_study_report(
    *, study: Study, n_resamples: int, enqueue: Callable[[int], None]
) -> dict | None:
    """The report of a study shown in a list of studies (rounds, codebook versions): computed
    now, with ``n_resamples``, up to :data:`REPORT_IN_REQUEST_MAX_LABELS` labels; past that the
    worker's report as :func:`ready_study_report` gives it, ``None`` while it is computed."""
    signature = report_signature(study=study)
    if _n_labels(signature) <= REPORT_IN_REQUEST_MAX_LABELS:
        return study_report(study=study, n_resamples=n_resamples, signature=signature)
    return _worker_report(study, signature, enqueue).report


def compute_study_report(*, study_id: int) -> str:
    """The report of the study computed and stored in the cache, also as the study's latest
    (the worker's side of :func:`ready_study_report`); the lock is released whatever happens."""
    try:
        study = Study.objects.filter(pk=study_id).first()
        if study is None:
            return "no such study"
        report = study_report(study=study)
        cache.set(latest_report_key(study_id), report, REPORT_CACHE_SECONDS)
        return f"computed {report['signature']}"
    finally:
        cache.delete(report_lock_key(study_id))


def study_report(
    *, study: Study, n_resamples: int = 1000, use_cache: bool = True, signature: str | None = None
) -> dict:
    """The agreement report of a study (see :func:`annotation.agreement_report.build_report`)
    plus ``annotators`` (the annotator table) and ``signature``. Cached until a label arrives."""

    def build(signature: str) -> dict:
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
        return report

    return cached_study_report(
        study=study,
        name="report",
        n_resamples=n_resamples,
        use_cache=use_cache,
        build=build,
        signature=signature,
    )


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
