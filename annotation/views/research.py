"""Researcher pages: studies, progress and exports (researchers and admins only)."""

from __future__ import annotations

import csv
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.forms import StudyCreateForm
from annotation.models import Study
from annotation.selectors.flow import (
    EXPORT_FIELDS,
    study_export_rows,
    study_participant_rows,
    study_progress,
)
from annotation.services import study as study_services
from core.roles import is_researcher


def researcher_required(view):
    @login_required
    def wrapped(request, *args, **kwargs):
        if not is_researcher(request.user):
            raise PermissionDenied("Study management is for researchers.")
        return view(request, *args, **kwargs)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


@researcher_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.all()
    return render(request, "annotation/research/study_list.html", {"studies": studies})


@researcher_required
def study_create(request: HttpRequest) -> HttpResponse:
    form = StudyCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            study = study_services.study_create(
                name=form.cleaned_data["name"],
                generation_ids=form.cleaned_data["generation_ids"],
                created_by=request.user,
                **form.settings(),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(
                request,
                f"Study “{study.name}” created with {len(form.cleaned_data['generation_ids'])} items.",
            )
            return redirect(study.get_absolute_url())
    return render(request, "annotation/research/study_create.html", {"form": form})


@researcher_required
def progress(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    entry_url = request.build_absolute_uri(reverse("annotation:enter", args=[study.slug]))
    context = {
        "study": study,
        "progress": study_progress(study=study),
        "participants": study_participant_rows(study=study),
        "entry_url": entry_url,
        "prolific_url": entry_url
        + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "statuses": Study.Status.choices,
    }
    return render(request, "annotation/research/progress.html", context)


@researcher_required
@require_POST
def set_status(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    try:
        study_services.study_set_status(study=study, status=request.POST.get("status", ""))
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect(study.get_absolute_url())


class _Echo:
    def write(self, value):
        return value


def _csv_value(value):
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else value


@researcher_required
def export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in ("jsonl", "csv"):
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    rows = study_export_rows(study=study)
    if fmt == "jsonl":
        body = (json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        response = StreamingHttpResponse(body, content_type="application/x-ndjson; charset=utf-8")
    else:
        writer = csv.writer(_Echo())
        header = (writer.writerow(EXPORT_FIELDS),)
        body = (writer.writerow([_csv_value(row[f]) for f in EXPORT_FIELDS]) for row in rows)
        response = StreamingHttpResponse(
            _chain(header, body), content_type="text/csv; charset=utf-8"
        )
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-annotations.{fmt}"'
    return response


def _chain(*iterables):
    for it in iterables:
        yield from it
