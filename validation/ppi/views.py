"""The PPI++ section (researchers and admins): How2Score corrected with a study's labels, alone
when htmx asks (the rankings page loads it in place), a page of its own otherwise, and a CSV or
JSONL download, as :mod:`validation.sections` serves them. Thin: context from
:mod:`validation.ppi.page`."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from annotation.models import Study
from benchmarks.models import Dataset
from core.access import researcher_required
from judging.models import Judge
from validation.ppi import page
from validation.sections import download, get_param, section_or_page


@researcher_required
def rankings_ppi(request: HttpRequest) -> HttpResponse:
    study, judge = get_param(request, Study, "study"), get_param(request, Judge, "judge", by="name")
    context = {"title": "How2Score corrected with human labels (PPI++)"}
    context.update(
        page.ppi_context(study=study, judge=judge, dataset=get_param(request, Dataset, "dataset"))
    )
    return section_or_page(
        request, "validation/ppi/_how2score_ppi_result.html", "how2score-ppi", context
    )


@researcher_required
def rankings_ppi_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The PPI++ How2Scores as CSV or JSONL: one row per generator and per generator and topic."""
    study, judge = get_param(request, Study, "study"), get_param(request, Judge, "judge", by="name")
    if study is None or judge is None:
        raise Http404("choose a study and a judge")
    context = page.ppi_context(
        study=study, judge=judge, dataset=get_param(request, Dataset, "dataset")
    )
    if not context["ppi"]:
        raise Http404(context["ppi_error"] or "nothing to export")
    rows = page.export_rows(context["ppi"])
    name = f"how2score-ppi-study{study.pk}"
    return download(rows, fields=page.EXPORT_FIELDS, name=name, fmt=fmt)
