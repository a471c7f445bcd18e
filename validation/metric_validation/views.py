"""The metric ↔ human validation page (researchers and admins): a scorer pack's metric against
a study's human labels, with bootstrap CIs. Thin: the context comes from
:mod:`validation.metric_validation.page`; bad options are shown (400), never a 500."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from core.access import researcher_required
from validation.metric_validation.page import metric_validation_page_context
from validation.metric_validation.params import ParamError, validation_params


@researcher_required
def metric_validation(request: HttpRequest) -> HttpResponse:
    study_id = request.GET.get("study", "")
    study = get_object_or_404(Study, pk=int(study_id)) if study_id.isdigit() else None
    params, error = None, ""
    if study is not None and request.GET.get("metric"):
        try:
            params = validation_params(request.GET)
        except ParamError as exc:
            error = str(exc)
    try:
        context = metric_validation_page_context(study=study, params=params, error=error)
    except ValueError as exc:  # an option the study cannot take (a dimension, the cut points)
        error = str(exc)
        context = metric_validation_page_context(study=study, params=params, error=error)
    return render(
        request,
        "validation/metric_validation/metric_validation.html",
        context,
        status=400 if error else 200,
    )
