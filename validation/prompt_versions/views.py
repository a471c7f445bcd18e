"""The prompt-version comparison page (researchers and admins), a sub-page of judge
validation: the prompt versions of one judge family side by side on a study. Thin: the
context comes from :mod:`validation.prompt_versions.page`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from core.access import researcher_required
from judging.models import Judge
from validation.prompt_versions.page import prompt_versions_page_context

MAX_ID = 2**63 - 1


@researcher_required
def prompt_versions(request: HttpRequest) -> HttpResponse:
    study_id = request.GET.get("study", "")
    judge_name = request.GET.get("judge", "")
    study = None
    if study_id.isdigit() and 0 < int(study_id) <= MAX_ID:
        study = get_object_or_404(Study, pk=int(study_id))
    elif study_id:
        return render(request, "400.html", {"message": "study: expected a study id"}, status=400)
    judge = get_object_or_404(Judge, name=judge_name) if judge_name else None
    context = prompt_versions_page_context(study=study, judge=judge)
    return render(request, "validation/prompt_versions/prompt_versions.html", context)
