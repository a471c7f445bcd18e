"""The label-set pages: the list with the upload form (researchers and admins upload), one label
set's answers (researchers read), and its deletion (admins). Thin: the form checks, the service
writes, the reads compute, the page formats."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.label_set_file import LabelSetError
from core.access import admin_required, researcher_required
from core.roles import is_admin
from validation.alt_test.page import epsilon_from
from validation.label_sets.forms import LabelSetForm
from validation.label_sets.page import label_set_context, provenance
from validation.label_sets.reads import label_set_report
from validation.label_sets.services import label_set_create, label_set_delete
from validation.models import LabelSet

LIST_LIMIT = 200


def _create(request: HttpRequest, form: LabelSetForm) -> LabelSet | None:
    data = form.cleaned_data
    upload = data.get("file")
    try:
        return label_set_create(
            name=data["name"],
            data=upload.read() if upload else None,
            filename=upload.name if upload else "",
            study=data.get("study"),
            judge=data.get("judge"),
            annotator_kind=data["annotator_kind"],
            description=data.get("description", ""),
            user=request.user,
            max_bytes=settings.LABEL_SET_MAX_BYTES,
            binary=data["critical_failures"],
        )
    except LabelSetError as exc:
        where = "file" if upload else ("study" if data.get("study") else "judge")
        prefix = f"{upload.name}: " if upload else ""
        form.add_error(where, f"{prefix}{exc} Nothing was stored.")
        return None


@researcher_required
def label_sets(request: HttpRequest) -> HttpResponse:
    form = LabelSetForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        created = _create(request, form)
        if created is not None:
            messages.success(request, f"Label set {created.name} stored.")
            return redirect("validation:label_set", pk=created.pk)
    sets = LabelSet.objects.select_related("uploaded_by", "study", "judge")[:LIST_LIMIT]
    return render(
        request,
        "validation/label_sets/list.html",
        {
            "form": form,
            "label_sets": [(s, provenance(s)) for s in sets],
            "title": "Your labels",
        },
        status=400 if request.method == "POST" else 200,
    )


@researcher_required
def label_set(request: HttpRequest, pk: int) -> HttpResponse:
    obj = get_object_or_404(LabelSet.objects.select_related("uploaded_by", "study", "judge"), pk=pk)
    epsilon, errors = epsilon_from(request.GET)
    judge = request.GET.get("judge", "").strip() or None
    try:
        report = label_set_report(
            obj, judge=judge, epsilon=epsilon if request.GET.get("epsilon") else None
        )
    except LabelSetError as exc:
        errors["judge"] = str(exc)
        report = label_set_report(obj, epsilon=None)
    context = {
        **label_set_context(obj, report),
        "errors": errors,
        "can_delete": is_admin(request.user),
    }
    return render(
        request, "validation/label_sets/detail.html", context, status=400 if errors else 200
    )


@require_POST
@admin_required
def label_set_remove(request: HttpRequest, pk: int) -> HttpResponse:
    obj = get_object_or_404(LabelSet, pk=pk)
    name = obj.name
    label_set_delete(label_set=obj)
    messages.success(request, f"Label set {name} deleted.")
    return redirect("validation:label_sets")
