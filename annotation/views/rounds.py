"""The rounds page of a study: agreement across rounds, and a button to start the next round
(researchers and admins; adding participants to Prolific groups goes through the Prolific
page's group action, admins only)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.forms import RoundForm
from annotation.models import Study, StudyRound
from annotation.selectors import quality as qs
from annotation.selectors.rounds import round_split, rounds_comparison
from annotation.services import rounds as round_services
from annotation.tasks import enqueue_study_report
from core.access import researcher_required
from core.errors import validation_text
from core.middleware import text_gate_exempt
from core.roles import is_admin


@text_gate_exempt  # RoundForm gates every posted value at its field (core.forms)
@researcher_required
def rounds_page(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    form = RoundForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            new = round_services.round_create(
                study=study, user=request.user, name=form.cleaned_data["name"]
            )
        except ValidationError as exc:  # at the field, the name typed kept
            form.add_error("name", validation_text(exc))
        else:
            messages.success(request, f"Round “{new.name}” created: set its Prolific study id.")
            return redirect(reverse("annotation:rounds", args=[new.pk]))
    carried, excluded = round_split(study=study)
    context = {
        "study": study,
        "rounds": rounds_comparison(study=study, enqueue=enqueue_study_report),
        "info": StudyRound.objects.filter(study=study).first(),
        "next_carried": carried,
        "next_excluded": excluded,
        "terms": qs.study_pay(study),
        "can_write": is_admin(request.user),
        "round_form": form,
    }
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "annotation/paid/rounds.html", context, status=status)
