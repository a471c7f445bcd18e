"""Per-pack results pages (researchers and admins): the scored generators of one scorer-pack
family side by side, with CIs and neighbour tests; ``…/results/export.csv`` or
``export.json`` (same query) downloads the same numbers. Thin:
:mod:`judging.pack_results`."""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from core.access import researcher_required
from core.streaming import export_lines, streaming_download
from judging.pack_results import PAGES, get_page
from judging.pack_results.page import (
    EXPORT_FIELDS,
    export_rows,
    page_context,
    results_report,
)
from judging.pack_results.reads import SelectionError, parse_selection

FORMATS = ("csv", "json")


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "judging/pack_results/index.html", {"pages": list(PAGES.values())})


def _page_or_404(pack: str):
    page = get_page(pack)
    if page is None:
        raise Http404(f"no results page for pack {pack!r}; known: {', '.join(PAGES)}")
    return page


@researcher_required
def results(request: HttpRequest, pack: str) -> HttpResponse:
    page = _page_or_404(pack)
    try:
        selection = parse_selection(request.GET)
        report = results_report(page=page, selection=selection)
    except SelectionError as exc:
        return render(request, "400.html", {"message": str(exc)}, status=400)
    context = page_context(page=page, report=report, selection=selection)
    context.update(query=request.GET.urlencode(), pack_pages=list(PAGES.values()))
    return render(request, page.template, context)


@researcher_required
def export(request: HttpRequest, pack: str, fmt: str) -> HttpResponse:
    """The page's numbers as CSV (one row per table cell and curve point) or JSON (the API's
    report)."""
    page = _page_or_404(pack)
    if fmt not in FORMATS:
        raise Http404(f"no export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    try:
        selection = parse_selection(request.GET)
        report = results_report(page=page, selection=selection)
    except SelectionError as exc:
        return render(request, "400.html", {"message": str(exc)}, status=400)
    if fmt == "json":
        response = HttpResponse(
            json.dumps(report, ensure_ascii=False, indent=1),
            content_type="application/json; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="{page.name}-results.json"'
        return response
    lines = export_lines(export_rows(report), fields=EXPORT_FIELDS, fmt="csv")
    return streaming_download(lines, filename=f"{page.name}-results.csv")
