"""The escalation page (researchers read; admins put the items below the threshold first in
the study's queue, one button). Thin: the form checks, the read computes, the service writes."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.access import admin_required, researcher_required
from validation.escalation import page
from validation.escalation.forms import EscalationForm
from validation.escalation.reads import DEFAULT_SEED, escalation_report
from validation.escalation.services import study_escalation_apply
from validation.escalation.stats import DEFAULT_ALPHA, DEFAULT_DELTA, EscalationError

TEMPLATE = "validation/escalation/escalation.html"


def _problem(form: EscalationForm, exc: EscalationError) -> str:
    """A refusal of a form field as its error; of the data (too few items…) as the page's."""
    if exc.field in form.fields:
        form.add_error(exc.field, str(exc))
        return ""
    return f"{form.cleaned_data['study'].name}: {exc}."


@researcher_required
def escalation(request: HttpRequest) -> HttpResponse:
    submitted = "study" in request.GET
    defaults = {"alpha": DEFAULT_ALPHA, "delta": DEFAULT_DELTA, "seed": DEFAULT_SEED}
    form = EscalationForm({**defaults, **request.GET.dict()} if submitted else None)
    context: dict = {"form": form, "problem": "", "recorded": ""}
    if submitted and form.is_valid():
        data = form.cleaned_data
        context["recorded"] = page.recorded(data["study"])
        try:
            report = escalation_report(
                study=data["study"], judge=data["judge"], alpha=data["alpha"],
                delta=data["delta"], seed=data["seed"],
            )  # fmt: skip
        except EscalationError as exc:
            context["problem"] = _problem(form, exc)
        else:
            context.update(page.report_context(report), query=request.GET.urlencode())
    failed = submitted and bool(form.errors or context["problem"])
    return render(request, TEMPLATE, context, status=400 if failed else 200)


@require_POST
@admin_required
def escalation_apply(request: HttpRequest) -> HttpResponse:
    form = EscalationForm(request.POST)
    if not form.is_valid():
        return render(request, TEMPLATE, {"form": form, "problem": ""}, status=400)
    data = form.cleaned_data
    try:
        escalation = study_escalation_apply(
            study=data["study"], judge=data["judge"], user=request.user, alpha=data["alpha"],
            delta=data["delta"], seed=data["seed"],
        )  # fmt: skip
    except EscalationError as exc:
        problem = _problem(form, exc)
        return render(request, TEMPLATE, {"form": form, "problem": problem}, status=400)
    messages.success(
        request,
        f"{data['study'].name}: {escalation['n_first']:,} items below the threshold "
        f"{escalation['threshold']:.2f} now come first in its queue (fixed seeded order).",
    )
    query = {k: request.POST[k] for k in ("study", "judge", "alpha", "delta", "seed")}
    return redirect(f"{reverse('validation:escalation')}?{urlencode(query)}")
