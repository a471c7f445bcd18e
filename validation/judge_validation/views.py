"""The judge validation page (researchers and admins): one judge against a study's human
majority with CIs, baselines, the human leave-one-out range and the other judges. Thin: the
context comes from :mod:`validation.judge_validation.page`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from core.access import researcher_required
from judging.models import Judge
from validation.judge_validation import page


@researcher_required
def validation(request: HttpRequest) -> HttpResponse:
    study_id = request.GET.get("study", "")
    judge_name = request.GET.get("judge", "")
    study = get_object_or_404(Study, pk=int(study_id)) if study_id.isdigit() else None
    judge = get_object_or_404(Judge, name=judge_name) if judge_name else None
    context = page.validation_page_context(study=study, judge=judge)
    return render(request, "validation/judge_validation/validation.html", context)
