"""Researcher pages for a study's agreement report, adjudication and label exports.

Researchers and admins only (annotators get 403, anonymous visitors the login page). Thin:
reads come from :mod:`annotation.report_selectors`, writes from :mod:`annotation.adjudication`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.models import Study
from annotation.plots import report_plots
from annotation.selectors import report as rs
from annotation.services import adjudication as adjudication_services
from annotation.views.research import researcher_required

QUEUE_PAGE_SIZE = 50


# --- formatting ------------------------------------------------------------------------------


def stat_text(stat: Mapping | None, *, percent: bool = False, digits: int = 3) -> str:
    """A statistic as text: ``0.593``, ``84.7%``, or ``undefined — <reason>`` (never NaN)."""
    if not stat or stat.get("value") is None:
        reason = (stat or {}).get("undefined") or "no value"
        return f"undefined — {reason}"
    value = stat["value"]
    return f"{value:.1%}" if percent else f"{value:.{digits}f}"


def ci_text(stat: Mapping | None) -> str:
    ci = (stat or {}).get("ci") or {}
    if ci.get("low") is None:
        return f"no interval — {ci['undefined']}" if ci.get("undefined") else ""
    return f"{ci['confidence']:.0%} CI {ci['low']:.3f} – {ci['high']:.3f}"


def report_display(report: dict) -> dict:
    """The report's numbers as text for the templates (the cached report stays untouched)."""
    ff = report.get("first_failure") or {}
    return {
        "alpha": stat_text(report["alpha"]),
        "alpha_ci": ci_text(report["alpha"]),
        "location_alpha": stat_text(ff.get("alpha")),
        "location_alpha_ci": ci_text(ff.get("alpha")),
        "location_percent": stat_text(ff.get("percent_agreement"), percent=True),
        "percent_agreement": stat_text(report["percent_agreement"], percent=True),
        "fleiss": stat_text(report["fleiss_kappa"]),
        "cohen_mean": stat_text(report["cohen_kappa"]["mean"]),
        "loo_min": stat_text(report["leave_one_out"]["min"], percent=True),
        "loo_max": stat_text(report["leave_one_out"]["max"], percent=True),
        "pairs": [
            {
                "a": p["annotator_a"],
                "b": p["annotator_b"],
                "n_items": p["n_items"],
                "kappa": stat_text(p["kappa"]),
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
        "annotators": [
            {
                **a,
                "median_active": (
                    f"{a['median_active_seconds']['value']:.0f} s"
                    if a["median_active_seconds"]["value"] is not None
                    else f"undefined — {a['median_active_seconds']['undefined']}"
                ),
                "attention_text": (
                    f"{a['attention']['value']:.0%} ({a['attention']['passed']}/{a['attention']['total']})"
                    if a["attention"]["value"] is not None
                    else f"undefined — {a['attention']['undefined']}"
                ),
                "agreement_text": stat_text(a["agreement_with_others"], percent=True),
            }
            for a in report["annotators"]
        ],
    }


def _report_context(study: Study) -> dict:
    report = rs.study_report(study=study)
    plots = report_plots(report)
    return {
        "study": study,
        "report": report,
        "shown": report_display(report),
        "plots": [(key, svg) for key, svg in plots.items()],
        "distribution": list(report["label_distribution"]["overall"].items()),
        "majority": report["majority"],
        "poll_seconds": getattr(settings, "ANNOTATION_REPORT_POLL_SECONDS", 10),
    }


# --- report ----------------------------------------------------------------------------------


@researcher_required
def report(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    return render(request, "annotation/report/report.html", _report_context(study))


@researcher_required
def report_partial(request: HttpRequest, pk: int) -> HttpResponse:
    """The report body, polled by htmx every 10 s; 204 (nothing to swap) when no label arrived
    since the signature the page shows."""
    study = get_object_or_404(Study, pk=pk)
    since = request.GET.get("since")
    if since and since == rs.report_signature(study=study):
        return HttpResponse(status=204)
    return render(request, "annotation/report/_body.html", _report_context(study))


# --- adjudication ----------------------------------------------------------------------------


@researcher_required
def queue(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    include_location = request.GET.get("location") == "1"
    items = rs.adjudication_queue(study=study, include_location=include_location)
    page = Paginator(items, QUEUE_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "study": study,
        "page": page,
        "include_location": include_location,
        "n_total": len(items),
        "n_open": sum(1 for q in items if not q["adjudicated"]),
    }
    return render(request, "annotation/report/queue.html", context)


def _steps_text(steps: Iterable[int]) -> str:
    return ", ".join(str(s) for s in steps)


@researcher_required
def adjudicate(request: HttpRequest, pk: int, item_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    item = rs.adjudication_item(study=study, item_id=item_id)
    if item is None:
        raise Http404("No regular item with this id in this study.")
    include_location = request.GET.get("location") == "1"
    current = rs.item_adjudication(item=item)
    error = ""
    form = None
    if request.method == "POST":
        choice = request.POST.get("has_failure", "")
        failures = adjudication_services.failures_from_form(request.POST)
        form = {
            "has_failure": choice,
            "failures": failures,
            "note": request.POST.get("note", ""),
        }
        try:
            adjudication_services.adjudication_record(
                item=item,
                has_failure={"1": True, "0": False}.get(choice),
                failures=failures if choice == "1" else [],
                note=form["note"],
                adjudicator=request.user,
            )
        except ValidationError as exc:
            error = "; ".join(exc.messages)
        else:
            messages.success(request, f"Item {item.pk}: adjudicated label saved.")
            target = _next_in_queue(study, item.pk, include_location)
            url = (
                reverse("annotation:adjudicate", args=[study.pk, target])
                if target
                else reverse("annotation:queue", args=[study.pk])
            )
            return redirect(url + ("?location=1" if include_location else ""))
    if form is None:
        form = {
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
    blank_rows = max(0, 3 - len(form["failures"]))
    form["rows"] = list(enumerate([*form["failures"], *([{}] * blank_rows)]))
    annotations = rs.item_annotations(item=item)
    procedure = item.generation.procedure
    context = {
        "study": study,
        "item": item,
        "procedure": procedure,
        "l1": list(enumerate(procedure.steps, start=1)),
        "l2": list(enumerate(item.generation.predicted_steps, start=1)),
        "annotations": annotations,
        "majority": rs.majority_of([a.has_failure for a in annotations])[0],
        "current": current,
        "form": form,
        "error": error,
        "include_location": include_location,
    }
    return render(
        request, "annotation/report/adjudicate.html", context, status=400 if error else 200
    )


def _next_in_queue(study: Study, after_item: int, include_location: bool) -> int | None:
    for entry in rs.adjudication_queue(study=study, include_location=include_location):
        if not entry["adjudicated"] and entry["item_id"] != after_item:
            return entry["item_id"]
    return None


# --- exports ---------------------------------------------------------------------------------


class _Echo:
    def write(self, value):
        return value


def csv_cell(value):
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    return value


def stream_rows(rows: Iterable[dict], *, fields: tuple[str, ...], fmt: str) -> Iterable[str]:
    """JSONL lines or CSV lines (header first; lists and objects as JSON text in a cell)."""
    if fmt == "jsonl":
        for row in rows:
            yield json.dumps(row, ensure_ascii=False) + "\n"
        return
    writer = csv.writer(_Echo())
    yield writer.writerow(fields)
    for row in rows:
        yield writer.writerow([csv_cell(row[f]) for f in fields])


def _download(body: Iterable[str], *, fmt: str, filename: str) -> StreamingHttpResponse:
    content_type = "application/x-ndjson" if fmt == "jsonl" else "text/csv"
    response = StreamingHttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@researcher_required
def labels_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in ("jsonl", "csv"):
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    rows = rs.study_item_label_rows(study=study)
    body = stream_rows(rows, fields=rs.ITEM_EXPORT_FIELDS, fmt=fmt)
    return _download(body, fmt=fmt, filename=f"study-{study.pk}-labels.{fmt}")


@researcher_required
def gold_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in ("jsonl", "csv"):
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    kind = request.GET.get("kind", "qualification")
    key = request.GET.get("key", "generation_id")
    if kind not in rs.GOLD_KINDS or key not in rs.GOLD_KEYS:
        return HttpResponse(
            f"kind must be one of {', '.join(rs.GOLD_KINDS)}; key one of {', '.join(rs.GOLD_KEYS)}",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    rows = list(rs.study_gold_rows(study=study, kind=kind, key=key))
    body = stream_rows(rows, fields=rs.gold_fields(key=key), fmt=fmt)
    return _download(body, fmt=fmt, filename=f"study-{study.pk}-gold-{kind}.{fmt}")
