"""The alt-test and PPI sections (researchers and admins). Each renders its section alone when
htmx asks (the validation and rankings pages load them in place), as a page of its own
otherwise (no script needed), and as a CSV or JSONL download (``…/export.csv``).
Thin: contexts from :mod:`judging.selectors.alt_test_pages` and
:mod:`judging.selectors.ppi_pages`."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from benchmarks.models import Dataset
from core.access import researcher_required
from core.streaming import EXPORT_FORMATS, export_lines, streaming_download
from judging.models import Judge
from judging.selectors import alt_test_pages, ppi_pages


def _get(request: HttpRequest, model, name: str, *, by: str = "pk"):
    raw = request.GET.get(name, "").strip()
    if not raw or (by == "pk" and not raw.isdigit()):
        return None
    return get_object_or_404(model, **{by: int(raw) if by == "pk" else raw})


def _download(rows, *, fields, name: str, fmt: str) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404(f"no export format {fmt!r}")
    return streaming_download(export_lines(rows, fields=fields, fmt=fmt), filename=f"{name}.{fmt}")


def _section_or_page(request, section: str, section_id: str, context: dict) -> HttpResponse:
    if request.headers.get("HX-Request"):
        return render(request, section, context)
    page = {**context, "section": section, "section_id": section_id}
    return render(request, "judging/compare/alt_test_ppi.html", page)


@researcher_required
def validation_alt_test(request: HttpRequest) -> HttpResponse:
    study, judge = _get(request, Study, "study"), _get(request, Judge, "judge", by="name")
    context = {
        "study": study,
        "judge": judge,
        "title": "The alternative annotator test",
        "epsilon": alt_test_pages.DEFAULT_EPSILON,
        **alt_test_pages.choices(),
    }
    if study is not None and judge is not None:
        context.update(
            alt_test_pages.alt_test_context(study=study, judge=judge, params=request.GET)
        )
    return _section_or_page(request, "judging/compare/_alt_test_result.html", "alt-test", context)


@researcher_required
def alt_test_plan(request: HttpRequest) -> HttpResponse:
    context = {"title": "Alt-test sample-size planner", **alt_test_pages.plan_context(request.GET)}
    return _section_or_page(
        request, "judging/compare/_alt_test_plan.html", "alt-test-plan", context
    )


@researcher_required
def rankings_ppi(request: HttpRequest) -> HttpResponse:
    study, judge = _get(request, Study, "study"), _get(request, Judge, "judge", by="name")
    context = {"title": "How2Score corrected with human labels (PPI++)"}
    context.update(
        ppi_pages.ppi_context(study=study, judge=judge, dataset=_get(request, Dataset, "dataset"))
    )
    return _section_or_page(
        request, "judging/compare/_how2score_ppi_result.html", "how2score-ppi", context
    )


@researcher_required
def validation_alt_test_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The alt-test as CSV or JSONL: one row per annotator and section."""
    study, judge = _get(request, Study, "study"), _get(request, Judge, "judge", by="name")
    if study is None or judge is None:
        raise Http404("choose a study and a judge")
    report = alt_test_pages.alt_test_context(study=study, judge=judge, params=request.GET)["alt"]
    rows = alt_test_pages.export_rows(report)
    fields = alt_test_pages.EXPORT_FIELDS
    return _download(rows, fields=fields, name=f"alt-test-study{study.pk}", fmt=fmt)


@researcher_required
def rankings_ppi_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The PPI++ How2Scores as CSV or JSONL: one row per generator and per generator and topic."""
    study, judge = _get(request, Study, "study"), _get(request, Judge, "judge", by="name")
    if study is None or judge is None:
        raise Http404("choose a study and a judge")
    context = ppi_pages.ppi_context(
        study=study, judge=judge, dataset=_get(request, Dataset, "dataset")
    )
    if not context["ppi"]:
        raise Http404(context["ppi_error"] or "nothing to export")
    rows = ppi_pages.export_rows(context["ppi"])
    name = f"how2score-ppi-study{study.pk}"
    return _download(rows, fields=ppi_pages.EXPORT_FIELDS, name=name, fmt=fmt)
