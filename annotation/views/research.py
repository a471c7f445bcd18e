"""Researcher pages: studies, progress and exports (researchers and admins only)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.forms import FIELDS_MAX_BYTES, KNOWN_ITEMS_MAX_BYTES, StudyCreateForm
from annotation.models import Study, StudyItem
from annotation.pages.research import progress_page_context, study_list_context
from annotation.selectors.export_sql import study_export_jsonl
from annotation.selectors.flow import EXPORT_FIELDS, study_export_rows
from annotation.services import study as study_services
from core.access import researcher_required
from core.errors import validation_text
from core.middleware import body_limit, text_gate_exempt
from core.streaming import EXPORT_FORMATS, export_lines, streaming_download


@researcher_required
def study_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/research/study_list.html", study_list_context())


@body_limit(KNOWN_ITEMS_MAX_BYTES + FIELDS_MAX_BYTES, "the new-study form")
@text_gate_exempt  # StudyCreateForm gates every posted value at its field (core.forms)
@researcher_required
def study_create(request: HttpRequest) -> HttpResponse:
    form = StudyCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            study = study_services.study_create(
                name=form.cleaned_data["name"],
                generation_ids=form.cleaned_data["generation_ids"],
                pairs=form.cleaned_data.get("pairs", []),
                known_items=form.cleaned_data.get("known_items") or [],
                created_by=request.user,
                **form.settings(),
            )
        except ValidationError as exc:  # under the field it names (known items), else the form
            errors = exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}
            for field, problems in errors.items():
                form.add_error(field if field in form.fields else None, problems)
        else:
            regular = study.items.filter(kind=StudyItem.Kind.REGULAR).count()
            known = study.items.count() - regular
            messages.success(
                request,
                f"Study “{study.name}” created with {regular} items"
                + (f" and {known} known item{'s' if known != 1 else ''}." if known else "."),
            )
            return redirect(study.get_absolute_url())
    return render(request, "annotation/research/study_create.html", {"form": form})


@researcher_required
def progress(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    entry_url = request.build_absolute_uri(reverse("annotation:enter", args=[study.slug]))
    context = progress_page_context(study=study, entry_url=entry_url)
    return render(request, "annotation/research/progress.html", context)


@researcher_required
@require_POST
def set_status(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    try:
        study_services.study_set_status(study=study, status=request.POST.get("status", ""))
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    return redirect(study.get_absolute_url())


@researcher_required
@require_POST
def set_entry_limit(request: HttpRequest, pk: int) -> HttpResponse:
    """The study's limit of new participants per network address (a lab session raises it)."""
    study = get_object_or_404(Study, pk=pk)
    try:
        study_services.study_set_entry_limit(
            study=study, value=request.POST.get("new_participants_per_address", "")
        )
    except ValidationError as exc:
        messages.error(
            request, "New participants per network address per hour: " + " ".join(exc.messages)
        )
        study.refresh_from_db()
        entry_url = request.build_absolute_uri(reverse("annotation:enter", args=[study.slug]))
        context = progress_page_context(study=study, entry_url=entry_url)
        return render(request, "annotation/research/progress.html", context, status=400)
    limit = study.new_participants_per_address
    messages.success(
        request,
        f"New participants per network address per hour: {limit:,}."
        if limit
        else "New participants per network address: no limit.",
    )
    return redirect(study.get_absolute_url())


@researcher_required
def export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    if fmt == "jsonl":
        lines = study_export_jsonl(study=study)
    else:
        lines = export_lines(study_export_rows(study=study), fields=EXPORT_FIELDS, fmt=fmt)
    return streaming_download(lines, filename=f"study-{study.pk}-annotations.{fmt}")
