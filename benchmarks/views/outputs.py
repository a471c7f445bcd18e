"""Pages: the long-output viewer (a generation against its reference, entry-aligned, long equal
runs folded, the first divergence highlighted) and the CustomPlans step diff. Researchers and
admins only; reads come from :mod:`benchmarks.pages.outputs`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.pages import outputs
from core.access import researcher_required


@researcher_required
def generation_output(request: HttpRequest, pk: int) -> HttpResponse:
    context = outputs.generation_output_page(pk=pk, mode=request.GET.get("mode"))
    return render(request, "benchmarks/generation_output.html", context)


@researcher_required
def generation_step_diff(request: HttpRequest, pk: int) -> HttpResponse:
    context = outputs.generation_step_diff_page(pk=pk)
    return render(request, "benchmarks/generation_step_diff.html", context)
