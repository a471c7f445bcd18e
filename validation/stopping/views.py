"""A study's target panel (researchers and admins; the study page loads it in place and it
asks again while labels arrive) and the resume (admins). Thin: context from
:mod:`validation.stopping.page`, the write from :mod:`validation.stopping.services`."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation.models import Study
from annotation.prolific.client import ProlificError
from core.access import admin_required, researcher_required
from core.errors import validation_text
from validation.sections import section_or_page
from validation.stopping import page, services
from validation.stopping.reads import prolific_paused_by_target


@researcher_required
def study_target(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    if study.target_half_width is None:
        raise Http404("This study has no target interval.")
    context = page.target_context(
        study=study, user=request.user, waited=request.GET.get("wait"), seen=request.GET.get("seen")
    )
    context["title"] = f"{study.name}: target interval"
    return section_or_page(request, "validation/stopping/_target.html", "study-target", context)


@admin_required
@require_POST
def study_target_resume(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    paused_on_prolific = prolific_paused_by_target(study)
    try:
        services.study_target_resume(study=study, user=request.user)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Not resumed: Prolific refused to start recruiting again: {exc}")
    else:
        messages.success(
            request,
            "Resumed: new items are handed out again"
            + (" and recruitment on Prolific is active again." if paused_on_prolific else "."),
        )
    return redirect(study.get_absolute_url())
