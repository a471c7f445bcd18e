"""Researcher pages for the comparisons: judges vs the human majority of a study, judge↔judge
agreement and generator rankings with Kendall's τ (the judge leaderboard beside them is
:mod:`judging.leaderboard.views`). Thin: the page contexts come from
:mod:`validation.comparisons.page` (numbers from :mod:`validation.comparisons.reads`, plots
from :mod:`core.charts`)."""

from __future__ import annotations

from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from benchmarks.models import Dataset
from core.access import researcher_required
from validation.comparisons import page


def _optional(request: HttpRequest, model: type[Model], param: str):
    """The object whose id the query parameter gives (404 if none has it); None without one."""
    value = request.GET.get(param, "")
    return get_object_or_404(model, pk=int(value)) if value.isdigit() else None


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "validation/comparisons/index.html", page.index_context())


@researcher_required
def study(request: HttpRequest, pk: int) -> HttpResponse:
    study_obj = get_object_or_404(Study, pk=pk)
    context = page.study_page_context(study=study_obj, chosen=request.GET.getlist("judge"))
    return render(request, "validation/comparisons/study.html", context)


@researcher_required
def judges(request: HttpRequest) -> HttpResponse:
    context = page.judges_page_context(
        study=_optional(request, Study, "study"), chosen=request.GET.getlist("judge")
    )
    return render(request, "validation/comparisons/judges.html", context)


@researcher_required
def rankings(request: HttpRequest) -> HttpResponse:
    context = page.rankings_page_context(
        dataset=_optional(request, Dataset, "dataset"), chosen=request.GET.getlist("judge")
    )
    return render(request, "validation/comparisons/rankings.html", context)
