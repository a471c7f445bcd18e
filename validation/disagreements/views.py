"""The disagreement page (researchers and admins): the items of a study where a judge and the
human majority differ, filtered, sorted, paged, and exported as CSV or JSONL (every filtered
item, not one page). Thin: the rows come from :mod:`validation.disagreements.reads`, the page
from :mod:`validation.disagreements.page`; a bad option is a 400 naming it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from core.access import researcher_required
from core.streaming import EXPORT_FORMATS, export_lines, streaming_download
from judging.models import Judge
from validation.disagreements import reads as sel
from validation.disagreements.page import disagreements_page_context

TEMPLATE = "validation/disagreements/disagreements.html"


def _export(study: Study, judge: Judge, filters: sel.Filters, fmt: str) -> HttpResponse:
    data = sel.study_disagreements(study=study, judge=judge)
    rows = sel.select_rows(data, filters)  # a ParamError here is answered by the caller
    lines = export_lines(
        (sel.export_row(r, study=study, judge=judge) for r in rows),
        fields=sel.EXPORT_FIELDS,
        fmt=fmt,
    )
    return streaming_download(lines, filename=f"disagreements-study{study.pk}-{judge.pk}.{fmt}")


@researcher_required
def disagreements(request: HttpRequest) -> HttpResponse:
    study_id = request.GET.get("study", "").strip()
    judge_name = request.GET.get("judge", "").strip()
    errors = []
    is_id = study_id.isascii() and study_id.isdigit()
    if study_id and not is_id:
        errors.append(f"study: expected a study id, got {study_id[:40]!r}")
    study = get_object_or_404(Study, pk=int(study_id)) if is_id else None
    judge = None
    if judge_name and sel.judge_name_error(judge_name):
        errors.append(f"judge: {sel.judge_name_error(judge_name)}")
    elif judge_name:
        judge = get_object_or_404(Judge, name=judge_name)
    fmt = request.GET.get("format", "")
    if fmt and fmt not in EXPORT_FORMATS:
        errors.append(f"format: choose one of {', '.join(EXPORT_FORMATS)}")
    filters = None
    try:
        filters = sel.filters_from_query(request.GET)
    except sel.ParamError as exc:
        errors.append(str(exc))
    if fmt and not errors and study is not None and judge is not None:
        try:
            return _export(study, judge, filters, fmt)
        except sel.ParamError as exc:
            errors.append(str(exc))
    context = disagreements_page_context(
        study=study, judge=judge, filters=filters, error="; ".join(errors)
    )
    return render(request, TEMPLATE, context, status=400 if context["error"] else 200)
