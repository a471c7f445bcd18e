"""Researcher pages for the comparisons: judges vs the human majority of a study, judge↔judge
agreement, generator rankings with Kendall's τ, and the judge leaderboard. Thin: the page
contexts come from :mod:`judging.selectors.compare_pages` (numbers from
:mod:`judging.selectors.comparison`, plots from :mod:`annotation.plots`)."""

from __future__ import annotations

from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from annotation.selectors.dashboard import latest_labelled_study
from benchmarks.models import Dataset
from core.access import researcher_required
from judging.selectors import compare_pages


def _optional(request: HttpRequest, model: type[Model], param: str):
    """The object whose id the query parameter gives (404 if none has it); None without one."""
    value = request.GET.get(param, "")
    return get_object_or_404(model, pk=int(value)) if value.isdigit() else None


def _study_or_latest(request: HttpRequest) -> Study | None:
    """The ``study`` chosen; without the parameter, the study labelled most recently (so the
    page opens on real numbers); ``study=`` (none chosen) stays none."""
    if "study" not in request.GET:
        return latest_labelled_study()
    return _optional(request, Study, "study")


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "judging/compare/index.html", compare_pages.index_context())


@researcher_required
def study(request: HttpRequest, pk: int) -> HttpResponse:
    study_obj = get_object_or_404(Study, pk=pk)
    context = compare_pages.study_page_context(study=study_obj, chosen=request.GET.getlist("judge"))
    return render(request, "judging/compare/study.html", context)


@researcher_required
def judges(request: HttpRequest) -> HttpResponse:
    context = compare_pages.judges_page_context(
        study=_optional(request, Study, "study"), chosen=request.GET.getlist("judge")
    )
    return render(request, "judging/compare/judges.html", context)


@researcher_required
def rankings(request: HttpRequest) -> HttpResponse:
    context = compare_pages.rankings_page_context(
        dataset=_optional(request, Dataset, "dataset"), chosen=request.GET.getlist("judge")
    )
    return render(request, "judging/compare/rankings.html", context)


@researcher_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    context = compare_pages.leaderboard_page_context(
        study=_study_or_latest(request), chosen=request.GET.getlist("judge")
    )
    return render(request, "judging/compare/leaderboard.html", context)
