"""How a validation section is served (the alt-test, its planner, PPI++): alone when htmx asks
(a page loads it in place), as a page of its own otherwise (no script needed), and as a CSV or
JSONL download; and the optional object a query parameter names."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from core.streaming import EXPORT_FORMATS, export_lines, streaming_download


def get_param(request: HttpRequest, model, name: str, *, by: str = "pk"):
    raw = request.GET.get(name, "").strip()
    if not raw or (by == "pk" and not raw.isdigit()):
        return None
    return get_object_or_404(model, **{by: int(raw) if by == "pk" else raw})


def download(rows, *, fields, name: str, fmt: str) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404(f"no export format {fmt!r}")
    return streaming_download(export_lines(rows, fields=fields, fmt=fmt), filename=f"{name}.{fmt}")


def section_or_page(request, section: str, section_id: str, context: dict) -> HttpResponse:
    if request.headers.get("HX-Request"):
        return render(request, section, context)
    page = {**context, "section": section, "section_id": section_id}
    return render(request, "validation/section.html", page)
