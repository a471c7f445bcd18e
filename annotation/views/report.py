"""Researcher pages for a study's agreement report, adjudication and label exports.

Researchers and admins only (annotators get 403, anonymous visitors the login page). Thin:
page contexts come from :mod:`annotation.pages.report`, reads from
:mod:`annotation.selectors.report`, :mod:`~annotation.selectors.adjudication` and
:mod:`~annotation.selectors.exports`, writes from :mod:`annotation.services.adjudication`.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.models import Study
from annotation.pages import report as report_pages
from annotation.selectors import adjudication as adjudication_reads
from annotation.selectors import exports
from annotation.selectors import report as rs
from annotation.services import adjudication as adjudication_services
from core.access import researcher_required
from core.errors import validation_text
from core.middleware import text_gate_exempt_fields
from core.streaming import EXPORT_FORMATS, export_lines, streaming_download

# --- report ----------------------------------------------------------------------------------


@researcher_required
def report(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    context = report_pages.report_page_context(study=study)
    return render(request, "annotation/report/report.html", context)


@researcher_required
def report_partial(request: HttpRequest, pk: int) -> HttpResponse:
    """The report body, polled by htmx every 10 s; 204 (nothing to swap) when no label arrived
    since the signature the page shows."""
    study = get_object_or_404(Study, pk=pk)
    since = request.GET.get("since")
    if since and since == rs.report_signature(study=study):
        return HttpResponse(status=204)
    context = report_pages.report_page_context(study=study)
    return render(request, "annotation/report/_body.html", context)


# --- adjudication ----------------------------------------------------------------------------


@researcher_required
def queue(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    context = report_pages.queue_page_context(
        study=study,
        include_location=request.GET.get("location") == "1",
        page_number=request.GET.get("page"),
    )
    return render(request, "annotation/report/queue.html", context)


@text_gate_exempt_fields("has_failure", "note", "f-*")  # refused at the field (the service)
@researcher_required
def adjudicate(request: HttpRequest, pk: int, item_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    item = adjudication_reads.adjudication_item(study=study, item_id=item_id)
    if item is None:
        raise Http404("No regular item with this id in this study.")
    include_location = request.GET.get("location") == "1"
    form, error, errors = None, "", {}
    if request.method == "POST":
        form = adjudication_services.adjudication_form_data(request.POST)
        try:
            adjudication_services.adjudication_record_form(
                item=item, form=form, adjudicator=request.user
            )
        except ValidationError as exc:  # each message at its field, what was typed kept
            error = validation_text(exc)
            errors = exc.message_dict if hasattr(exc, "error_dict") else {}
        else:
            messages.success(request, f"Item {item.pk}: adjudicated label saved.")
            return redirect(_after_adjudication(study, item.pk, include_location))
    context = report_pages.adjudication_page_context(
        study=study,
        item=item,
        include_location=include_location,
        form=form,
        error=error,
        errors=errors,
    )
    return render(
        request, "annotation/report/adjudicate.html", context, status=400 if error else 200
    )


def _after_adjudication(study: Study, item_id: int, include_location: bool) -> str:
    """The next open item of the queue, or the queue when none is left."""
    target = report_pages.next_in_queue(
        study=study, after_item=item_id, include_location=include_location
    )
    url = (
        reverse("annotation:adjudicate", args=[study.pk, target])
        if target
        else reverse("annotation:queue", args=[study.pk])
    )
    return url + ("?location=1" if include_location else "")


# --- exports ---------------------------------------------------------------------------------


@researcher_required
def labels_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    rows = exports.study_item_label_rows(study=study)
    body = export_lines(rows, fields=exports.ITEM_EXPORT_FIELDS, fmt=fmt)
    return streaming_download(body, filename=f"study-{study.pk}-labels.{fmt}")


@researcher_required
def gold_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    kind = request.GET.get("kind", "qualification")
    key = request.GET.get("key", "generation_id")
    if kind not in exports.GOLD_KINDS or key not in exports.GOLD_KEYS:
        return HttpResponse(
            f"kind must be one of {', '.join(exports.GOLD_KINDS)}; key one of {', '.join(exports.GOLD_KEYS)}",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    rows = list(exports.study_gold_rows(study=study, kind=kind, key=key))
    body = export_lines(rows, fields=exports.gold_fields(key=key), fmt=fmt)
    return streaming_download(body, filename=f"study-{study.pk}-gold-{kind}.{fmt}")
