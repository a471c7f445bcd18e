"""What the researcher's report, adjudication queue and adjudication pages show: the template
contexts of :mod:`annotation.views.report`, built from :mod:`annotation.selectors.report` and
:mod:`annotation.selectors.adjudication` (the numbers are formatted here once, the cached report
stays untouched)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial

from django.conf import settings
from django.core.paginator import Paginator

from annotation.models import Adjudication, Study, StudyItem
from annotation.plots import report_plots
from annotation.report_panels import report_panels
from annotation.selectors import adjudication as adjudication_reads
from annotation.selectors import report as rs
from annotation.selectors.exports import majority_of
from annotation.selectors.report_forms import form_report_display
from annotation.tasks import enqueue_study_report
from core.formatting import (
    DASH,
    UNDEFINED_WITH_REASON,
    Missing,
    fmt_interval,
    fmt_stat,
    stat_value,
)

QUEUE_PAGE_SIZE = 50
# Past ANNOTATORS_LISTED annotators the table shows the ANNOTATORS_LOWEST with the lowest
# agreement with the others' majority (the full table is in the report's JSON).
ANNOTATORS_LISTED = 100
ANNOTATORS_LOWEST = 50
BLANK_FAILURE_ROWS = 3


# --- the report ------------------------------------------------------------------------------


# A statistic as text: ``0.593``, ``84.7%``, or a dash with the reason in small type (never NaN).
stat_text = partial(fmt_stat, undefined=UNDEFINED_WITH_REASON)


def ci_text(stat: Mapping | None) -> str:
    interval = fmt_interval(stat)
    if interval is not None:
        return interval
    reason = ((stat or {}).get("ci") or {}).get("undefined")
    return Missing(f"no interval: {reason}") if reason else ""


def stat_card(stat: Mapping | None, *, percent: bool = False) -> dict:
    """A headline number: ``{"value": "0.593", "why": ""}``, or for an undefined statistic
    ``{"value": "—", "why": <the reason>}`` (a dash in headline type, the reason in small)."""
    value = (stat or {}).get("value")
    if value is None:
        return {"value": DASH, "why": (stat or {}).get("undefined") or "no value yet"}
    return {"value": stat_text(stat, percent=percent), "why": ""}


def report_display(report: dict) -> dict:
    """The report's numbers as text for the templates (the cached report stays untouched)."""
    ff = report.get("first_failure") or {}
    loo_min, loo_max = report["leave_one_out"]["min"], report["leave_one_out"]["max"]
    return {
        "cards": {
            "alpha": stat_card(report["alpha"]),
            "location_alpha": stat_card(ff.get("alpha")),
            "percent_agreement": stat_card(report["percent_agreement"], percent=True),
            "fleiss": stat_card(report["fleiss_kappa"]),
            "cohen_mean": stat_card(report["cohen_kappa"]["mean"]),
            "gwet_ac1": stat_card(report.get("gwet_ac1")),
            "loo": (
                {
                    "value": f"{stat_text(loo_min, percent=True)} – "
                    f"{stat_text(loo_max, percent=True)}",
                    "why": "",
                }
                if stat_value(loo_min) is not None and stat_value(loo_max) is not None
                else stat_card(loo_min if stat_value(loo_min) is None else loo_max)
            ),
        },
        "alpha": stat_text(report["alpha"]),
        "alpha_ci": ci_text(report["alpha"]),
        "location_alpha": stat_text(ff.get("alpha")),
        "location_alpha_ci": ci_text(ff.get("alpha")),
        "location_percent": stat_text(ff.get("percent_agreement"), percent=True),
        "percent_agreement": stat_text(report["percent_agreement"], percent=True),
        "fleiss": stat_text(report["fleiss_kappa"]),
        "fleiss_ci": ci_text(report["fleiss_kappa"]),
        "gwet_ac1": stat_text(report.get("gwet_ac1")),
        "gwet_ac1_ci": ci_text(report.get("gwet_ac1")),
        "cohen_mean": stat_text(report["cohen_kappa"]["mean"]),
        "cohen_mean_ci": ci_text(report["cohen_kappa"]["mean"]),
        "loo_min": stat_text(report["leave_one_out"]["min"], percent=True),
        "loo_max": stat_text(report["leave_one_out"]["max"], percent=True),
        "pairs": [
            {
                "a": p["annotator_a"],
                "b": p["annotator_b"],
                "n_items": p["n_items"],
                "kappa": stat_text(p["kappa"]),
                "kappa_ci": ci_text(p["kappa"]),
                "percent": stat_text(p["percent_agreement"], percent=True),
            }
            for p in report["cohen_kappa"]["pairs"]
        ],
        "groups": [
            {
                "column": column,
                "rows": [
                    {
                        "group": g["group"],
                        "n_items": g["n_items"],
                        "n_labels": g["n_labels"],
                        "alpha": stat_text(g["alpha"]),
                        "alpha_ci": ci_text(g["alpha"]),
                        "percent": stat_text(g["percent_agreement"], percent=True),
                    }
                    for g in groups
                ],
            }
            for column, groups in report["groups"].items()
        ],
        "pairs_summary": _pairs_summary_text(report["cohen_kappa"]),
        "n_annotator_rows": len(report["annotators"]),
        "annotators": [
            {
                **a,
                "median_active": (
                    f"{a['median_active_seconds']['value']:.0f} s"
                    if a["median_active_seconds"]["value"] is not None
                    else Missing(a["median_active_seconds"]["undefined"])
                ),
                "attention_text": (
                    f"{a['attention']['value']:.0%} ({a['attention']['passed']}/{a['attention']['total']})"
                    if a["attention"]["value"] is not None
                    else Missing(a["attention"]["undefined"])
                ),
                "agreement_text": stat_text(a["agreement_with_others"], percent=True),
            }
            for a in annotators_shown(report["annotators"])
        ],
    }


def annotators_shown(rows: list[dict]) -> list[dict]:
    """Every annotator up to :data:`ANNOTATORS_LISTED`; past that the
    :data:`ANNOTATORS_LOWEST` with the lowest agreement with the others' majority, lowest first."""
    if len(rows) <= ANNOTATORS_LISTED:
        return rows
    rated = [a for a in rows if stat_value(a["agreement_with_others"]) is not None]
    rated.sort(key=lambda a: (stat_value(a["agreement_with_others"]), -a["n_compared"]))
    return rated[:ANNOTATORS_LOWEST]


def _pairs_summary_text(cohen: Mapping) -> dict | None:
    """How κ spreads over the annotator pairs, when the pairs are too many to list."""
    summary = cohen.get("summary")
    if cohen.get("pairs_listed") != "lowest" or not summary:
        return None
    return {
        "n_pairs": summary["n_pairs"],
        "min_items": summary["min_items"],
        "n_pairs_min_items": summary["n_pairs_min_items"],
        "median": stat_text(summary["median"]),
        "q1": stat_text(summary["q1"]),
        "q3": stat_text(summary["q3"]),
        "mean": stat_text(summary["mean"]),
        "n_listed": len(cohen["pairs"]),
    }


def report_page_context(*, study: Study) -> dict:
    """The report page and its polled body. A large study's report is computed by a worker
    (:func:`annotation.selectors.report.ready_study_report`): until it is stored the page says
    so (``report`` ``None``), or shows the last one computed with ``computing`` set."""
    ready = rs.ready_study_report(study=study, enqueue=enqueue_study_report)
    context = {
        "study": study,
        "report": ready.report,
        "computing": ready.computing,
        "n_labels_stored": ready.n_labels,
        "poll_seconds": getattr(settings, "ANNOTATION_REPORT_POLL_SECONDS", 10),
    }
    if ready.report is None:
        return context
    report = ready.report
    plots = report_plots(report)
    return {
        **context,
        "shown": report_display(report),
        "plots": [(key, svg) for key, svg in plots.items()],
        "distribution": list(report["label_distribution"]["overall"].items()),
        "majority": report["majority"],
        "form_report": form_report_display(study=study),
        "panels": report_panels(study),
    }


# --- adjudication ----------------------------------------------------------------------------


def queue_page_context(*, study: Study, include_location: bool, page_number: str | None) -> dict:
    """The adjudication queue, a page of it at a time, with its open and total counts."""
    items = adjudication_reads.adjudication_queue(study=study, include_location=include_location)
    return {
        "study": study,
        "page": Paginator(items, QUEUE_PAGE_SIZE).get_page(page_number),
        "include_location": include_location,
        "n_total": len(items),
        "n_open": sum(1 for q in items if not q["adjudicated"]),
    }


def next_in_queue(*, study: Study, after_item: int, include_location: bool) -> int | None:
    """The next item still to adjudicate, other than ``after_item``."""
    for entry in adjudication_reads.adjudication_queue(
        study=study, include_location=include_location
    ):
        if not entry["adjudicated"] and entry["item_id"] != after_item:
            return entry["item_id"]
    return None


def _steps_text(steps: Iterable[int]) -> str:
    return ", ".join(str(s) for s in steps)


def adjudication_form_initial(*, current: Adjudication | None) -> dict:
    """The adjudication form filled from the item's current adjudicated label, if any."""
    return {
        "has_failure": "" if current is None else ("1" if current.has_failure else "0"),
        "failures": [
            {
                "description": f["description"],
                "l1_steps": _steps_text(f["l1_steps"]),
                "l2_steps": _steps_text(f["l2_steps"]),
            }
            for f in (current.failures if current else [])
        ],
        "note": current.note if current else "",
    }


def adjudication_page_context(
    *,
    study: Study,
    item: StudyItem,
    include_location: bool,
    form: Mapping | None = None,
    error: str = "",
    errors: Mapping | None = None,
) -> dict:
    """The adjudication page: the item, every annotator's label, the current adjudicated
    label, and the form (as posted, or filled from the current label), with blank rows."""
    current = adjudication_reads.item_adjudication(item=item)
    form = dict(form) if form is not None else adjudication_form_initial(current=current)
    blank_rows = max(0, BLANK_FAILURE_ROWS - len(form["failures"]))
    errors = errors or {}  # a refusal's messages by field (adjudication_clean), shown there
    form["rows"] = [
        (i, f, errors.get(f"failure-{i + 1}", []))
        for i, f in enumerate([*form["failures"], *([{}] * blank_rows)])
    ]
    annotations = adjudication_reads.item_annotations(item=item)
    procedure = item.generation.procedure
    return {
        "study": study,
        "item": item,
        "procedure": procedure,
        "l1": list(enumerate(procedure.steps, start=1)),
        "l2": list(enumerate(item.generation.predicted_steps, start=1)),
        "annotations": annotations,
        "majority": majority_of([a.has_failure for a in annotations])[0],
        "current": current,
        "form": form,
        "error": error,
        "errors": errors,
        "include_location": include_location,
    }
