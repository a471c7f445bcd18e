"""The alt-test section and its sample-size planner (researchers and admins): the section alone
when htmx asks (the validation page loads it in place), a page of its own otherwise, and a
CSV or JSONL download (``…/export.csv``), as :mod:`validation.sections` serves them. Thin:
contexts from :mod:`validation.alt_test.page`."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from annotation.models import Study
from core.access import researcher_required
from judging.models import Judge
from validation.alt_test import page
from validation.sections import download, get_param, section_or_page


@researcher_required
def validation_alt_test(request: HttpRequest) -> HttpResponse:
    study, judge = get_param(request, Study, "study"), get_param(request, Judge, "judge", by="name")
    context = {
        "study": study,
        "judge": judge,
        "title": "The alternative annotator test",
        "epsilon": page.DEFAULT_EPSILON,
        **page.choices(),
    }
    if study is not None and judge is not None:
        context.update(page.alt_test_context(study=study, judge=judge, params=request.GET))
    return section_or_page(
        request, "validation/alt_test/_alt_test_result.html", "alt-test", context
    )


@researcher_required
def alt_test_plan(request: HttpRequest) -> HttpResponse:
    context = {"title": "Alt-test sample-size planner", **page.plan_context(request.GET)}
    return section_or_page(
        request, "validation/alt_test/_alt_test_plan.html", "alt-test-plan", context
    )


@researcher_required
def validation_alt_test_export(request: HttpRequest, fmt: str) -> HttpResponse:
    """The alt-test as CSV or JSONL: one row per annotator and section."""
    study, judge = get_param(request, Study, "study"), get_param(request, Judge, "judge", by="name")
    if study is None or judge is None:
        raise Http404("choose a study and a judge")
    report = page.alt_test_context(study=study, judge=judge, params=request.GET)["alt"]
    rows = page.export_rows(report)
    fields = page.EXPORT_FIELDS
    return download(rows, fields=fields, name=f"alt-test-study{study.pk}", fmt=fmt)
