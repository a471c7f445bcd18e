"""Researcher pages of a paid study: Prolific submissions (approve, reject, request return, with
a confirmation step), bonuses (preview, then pay), the exclusion group, the log of Prolific calls,
pay terms and effective hourly pay, and the participant quality page.

Researchers read; only admins change anything on Prolific or the pay terms (checked again in
the services). Thin: reads in :mod:`annotation.selectors.quality`, writes in
:mod:`annotation.services.prolific` and :mod:`annotation.services.pay`."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.forms_paid import BonusesForm, ExcludeForm, PayTermsForm, SubmissionsForm
from annotation.models import Study
from annotation.money import shown
from annotation.prolific.client import REJECTION_CATEGORIES, ProlificError
from annotation.selectors import quality as qs
from annotation.services import pay as pay_services
from annotation.services import prolific as ps
from core.access import admin_required, researcher_required
from core.errors import validation_text
from core.formatting import fmt_count
from core.middleware import text_gate_exempt
from core.roles import is_admin
from core.streaming import EXPORT_FORMATS, export_lines, streaming_download

COLUMNS = [
    ("participant", "Participant"),
    ("items_done", "Items"),
    ("seconds_per_item", "Active s/item"),
    ("attention_passed", "Attention passed"),
    ("majority_agreement", "Majority agreement"),
    ("gold_agreement", "Known items"),
    ("silent_gold_agreement", "Silent gold"),
    ("drift", "Drift"),
    ("action", "Suggested"),
]


def _page(study: Study, *, listed: bool = False) -> str:
    """The Prolific page; ``listed``: with the submissions listed again (after an action)."""
    url = reverse("annotation:prolific", args=[study.pk])
    return f"{url}?load=1" if listed else url


@researcher_required
def prolific_page(request: HttpRequest, pk: int) -> HttpResponse:
    """A plain view never calls Prolific: the submissions are listed (one logged call) only
    when asked for, with the "List submissions" button (``?load=1``), or after an action."""
    study = get_object_or_404(Study, pk=pk)
    listed = bool(study.prolific_study_id) and request.GET.get("load") == "1"
    return _prolific_render(request, study, listed=listed)


def _prolific_render(request, study: Study, *, listed=False, form=None) -> HttpResponse:
    """The page; ``form``: a refused box (bonuses, exclusion) shown again with what was typed
    and each refusal at its field (400)."""
    submissions, error = [], ""
    if listed:
        try:
            submissions = ps.submissions_list(study=study, user=request.user)
        except ProlificError as exc:
            error = str(exc)
    actions = {r["prolific_pid"]: r for r in qs.quality_rows(study=study) if r["prolific_pid"]}
    for s in submissions:
        s["quality"] = actions.get(s["participant_id"])
    context = {
        "study": study,
        "submissions": submissions,
        "error": error,
        "categories": REJECTION_CATEGORIES.items(),
        "calls": ps.calls(study=study),
        "can_write": is_admin(request.user),
        "terms": qs.study_pay(study),
        "rule_bonuses": qs.rule_bonus_csv(study=study),
        "listed": listed,
        "typed": {name: form[name].value() for name in form.fields} if form else {},
        "field_errors": {k: " ".join(v) for k, v in form.errors.items()} if form else {},
    }
    if form and "__all__" in context["field_errors"]:
        context["field_errors"]["form"] = context["field_errors"].pop("__all__")
    status = 400 if form and form.errors else 200
    return render(request, "annotation/paid/prolific.html", context, status=status)


@text_gate_exempt  # SubmissionsForm gates every posted value at its field (core.forms)
@admin_required
@require_POST
def submissions_action(request: HttpRequest, pk: int) -> HttpResponse:
    """First POST: the confirmation page; the POST from it (``confirm=1``) does the calls. A
    refused message is shown at its field with the submissions listed again."""
    study = get_object_or_404(Study, pk=pk)
    form = SubmissionsForm(request.POST)
    if not form.is_valid():
        return _prolific_render(request, study, listed=bool(study.prolific_study_id), form=form)
    data = request.POST
    fields = {
        "action": data.get("action", ""),
        "submission_ids": data.getlist("submission"),
        "category": data.get("rejection_category", ""),
        "message": data.get("message", ""),
    }
    try:
        ids = ps.validate_transition(**fields)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
        return redirect(_page(study))
    if data.get("confirm") != "1":
        context = {"study": study, "ids": ids, **fields}
        context["category_label"] = REJECTION_CATEGORIES.get(fields["category"], "")
        return render(request, "annotation/paid/confirm_action.html", context)
    result = ps.submissions_transition(study=study, user=request.user, **fields)
    if result.done:
        messages.success(request, f"{fields['action'].title()}: {len(result.done)} done.")
    for sub_id, why in result.failed:
        messages.error(request, f"{sub_id}: {why}")
    return redirect(_page(study, listed=True))


@text_gate_exempt  # BonusesForm gates every posted value at its field (core.forms)
@admin_required
@require_POST
def bonuses(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    form = BonusesForm(request.POST)
    if not form.is_valid():
        return _prolific_render(request, study, form=form)
    csv_text = request.POST.get("bonuses", "")
    currency = qs.study_pay(study).currency
    try:  # checked before asking: a refused line is shown at the box, the text kept
        preview = ps.bonus_preview(csv_text=csv_text, currency=currency)
    except ValidationError as exc:
        for field, errs in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errs)
        return _prolific_render(request, study, form=form)
    try:
        if request.POST.get("confirm") != "1":
            context = {"study": study, "preview": preview, "csv_text": csv_text}
            context["currency"] = currency
            return render(request, "annotation/paid/confirm_bonuses.html", context)
        bulk_id = ps.bonus_submit(
            study=study, user=request.user, csv_text=csv_text, digest=request.POST.get("digest", "")
        )
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Bonuses not paid: {exc}")
    else:
        messages.success(
            request,
            f"Bonuses paid: {fmt_count(len(preview.bonuses), 'participant')}, total "
            f"{shown(preview.total, currency)} "
            f"(Prolific payment {bulk_id}).",
        )
    return redirect(_page(study))


@text_gate_exempt  # ExcludeForm gates every posted value at its field (core.forms)
@admin_required
@require_POST
def exclude(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    form = ExcludeForm(request.POST)
    if not form.is_valid():
        return _prolific_render(request, study, form=form)
    ids = request.POST.getlist("participant") or request.POST.get("participants", "").split()
    group = request.POST.get("group_id", "")
    try:  # checked before asking: the confirmation never offers what the call would refuse
        group, ids = ps.group_add_checked(group_id=group, participant_ids=ids)
    except ValidationError as exc:
        for field, errs in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errs)
        return _prolific_render(request, study, form=form)
    if request.POST.get("confirm") != "1":
        context = {"study": study, "ids": ids, "group_id": group}
        return render(request, "annotation/paid/confirm_exclude.html", context)
    try:
        n = ps.group_add(study=study, user=request.user, group_id=group, participant_ids=ids)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Nobody added to the group: {exc}")
    else:
        messages.success(request, f"{fmt_count(n, 'participant')} added to group {group}.")
    return redirect(_page(study))


# --- pay -----------------------------------------------------------------------------------------


@text_gate_exempt  # PayTermsForm gates every posted value at its field (core.forms)
@researcher_required
def pay_page(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    if request.method == "POST":
        return _pay_update(request, study)
    return _pay_render(request, study, PayTermsForm.for_terms(qs.study_pay(study)))


def _pay_render(request: HttpRequest, study: Study, form: PayTermsForm) -> HttpResponse:
    context = {"study": study, **qs.pay_rows(study=study), "can_write": is_admin(request.user)}
    context["form"] = form
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "annotation/paid/pay.html", context, status=status)


@admin_required
def _pay_update(request: HttpRequest, study: Study) -> HttpResponse:
    """A refusal (the gate, an amount, the model's rules) is shown at its field, typed values
    kept (the page again, 400); saved terms redirect."""
    form = PayTermsForm(request.POST)
    if form.is_valid():
        try:
            pay_services.pay_terms_update(study=study, user=request.user, **form.changes())
        except ValidationError as exc:
            for field, errs in getattr(exc, "message_dict", {"__all__": exc.messages}).items():
                form.add_error(field if field in form.fields else None, errs)
        else:
            messages.success(request, "Pay terms saved.")
            return redirect(reverse("annotation:pay", args=[study.pk]))
    return _pay_render(request, study, form)


# --- quality -------------------------------------------------------------------------------------


@researcher_required
def quality_page(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    sort = request.GET.get("sort", "action")
    desc = sort.startswith("-")
    key = sort.lstrip("-")
    rows = qs.quality_rows(study=study, sort=key, descending=desc)
    context = {"study": study, "rows": rows, "sort": sort, "columns": COLUMNS}
    return render(request, "annotation/paid/quality.html", context)


@researcher_required
def quality_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    if fmt not in EXPORT_FORMATS:
        raise Http404("Exports are .jsonl or .csv")
    study = get_object_or_404(Study, pk=pk)
    rows = qs.quality_rows(study=study)
    lines = export_lines(rows, fields=qs.QUALITY_FIELDS, fmt=fmt)
    return streaming_download(lines, filename=f"study-{study.pk}-quality.{fmt}")
