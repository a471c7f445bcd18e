"""Researcher pages of a study's life on Prolific (create, pilot, publish, pause, resume,
stop, add places, Prolific's status and counts beside the app's own), the admins' webhook
page and the receiving endpoint of Prolific's webhooks. (The page a participant whose place
ended on Prolific sees is a page of the flow: :func:`annotation.views.flow.returned`.)

Researchers read; only admins change anything on Prolific (checked again in the services).
Whatever spends money (publish, pilot, places) shows a confirmation step first. Thin: reads
in :mod:`annotation.selectors.prolific_study`, writes in :mod:`annotation.services.prolific_study`
and :mod:`annotation.services.prolific_hooks`."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from annotation.forms_paid import PilotForm, PostedNumbersForm, ProlificDraftForm
from annotation.models import ProlificCall, ProlificDelivery, Study
from annotation.money import amount_help, shown
from annotation.prolific import rules
from annotation.prolific.client import ProlificError
from annotation.selectors import prolific_study as sel
from annotation.services import prolific as ps
from annotation.services import prolific_hooks as hooks
from annotation.services import prolific_study as life
from core.access import admin_required, researcher_required
from core.errors import validation_text
from core.middleware import text_gate_exempt
from core.roles import is_admin


def _page(study: Study) -> HttpResponse:
    return redirect(reverse("annotation:prolific_study", args=[study.pk]))


def _int(raw: str, field: str) -> int:
    try:
        return int((raw or "").strip())
    except ValueError:
        raise ValidationError({field: f"{raw[:20]!r} is not a whole number."}) from None


def _split(raw: str) -> list[str]:
    return [v for v in re.split(r"[\s,]+", raw or "") if v]


@researcher_required
def study_page(request: HttpRequest, pk: int) -> HttpResponse:
    """Opening the page asks Prolific nothing; "Read from Prolific" does (logged)."""
    return _study_render(request, get_object_or_404(Study, pk=pk))


def _study_render(
    request, study: Study, *, typed=None, errors=None, pilot_form=None
) -> HttpResponse:
    """The page; ``typed`` and ``errors``: a refused *Create* box shown again with what was
    typed and each refusal at its field (400); ``pilot_form``: a refused *After the pilot* box."""
    state = sel.prolific_state(study)
    pilot_shown = bool(state and state.pilot_places and not state.pilot_confirmed_at)
    if pilot_form is not None and pilot_form.errors and not pilot_shown:  # no box to show it at
        said = " ".join(m for errs in pilot_form.errors.values() for m in errs)
        errors = {**(errors or {}), "box": said}
    currency = sel.study_pay(study).currency
    reward = sel.prolific_reward(state) if state else None
    preview = None
    if state and state.status == "UNPUBLISHED" and reward:
        preview = sel.cost_preview(study=study, reward=reward, places=state.total_places)
    context = {
        "currency": currency,
        "amount_help": amount_help(currency),
        "cost_lines": sel.cost_lines(preview, currency) if preview else [],
        "pilot_typed": pilot_form.data if pilot_form is not None else {},
        "pilot_errors": {
            ("form" if k == "__all__" else k): " ".join(v) for k, v in pilot_form.errors.items()
        }
        if pilot_form is not None
        else {},
        "study": study,
        "state": state,
        "draft": (typed or sel.draft_defaults(study=study)) if state is None else None,
        "create_errors": errors or {},
        "devices": rules.DEVICES,
        "proposal": sel.pilot_proposal(study=study) if state and state.pilot_places else None,
        "app_counts": [
            (sel.APP_COUNT_LABELS[k], v) for k, v in sel.app_counts(study=study).items()
        ],
        "submission_counts": sorted(sel.submission_counts(study=study).items()),
        "calls": ps.calls(study=study),
        "can_write": is_admin(request.user),
        "webhooks": bool(hooks.webhook_url()),
    }
    status = 400 if errors or (pilot_form is not None and pilot_form.errors) else 200
    return render(request, "annotation/paid/prolific_study.html", context, status=status)


def _study_url(request: HttpRequest, study: Study) -> str:
    path = reverse("annotation:enter", args=[study.slug])
    base = str(getattr(settings, "PROLIFIC_PUBLIC_BASE_URL", "") or "").rstrip("/")
    return f"{base}{path}" if base else request.build_absolute_uri(path)


@text_gate_exempt  # ProlificDraftForm gates every posted value at its field (core.forms)
@admin_required
@require_POST
def create(request: HttpRequest, pk: int) -> HttpResponse:
    """A refusal (the gate, a number, Prolific's rules) is shown at its field with what was
    typed kept; a draft created redirects."""
    study = get_object_or_404(Study, pk=pk)
    data = request.POST
    currency = sel.study_pay(study).currency
    form = ProlificDraftForm(data, currency=currency)
    errors: dict[str, str] = {}
    if form.is_valid():
        c = form.cleaned_data
        try:
            draft = sel.Draft(
                name=c["name"],
                description=c["description"],
                reward=c["reward"],
                minutes=c["minutes"],
                places=c["places"],
                devices=data.getlist("devices"),
                allow_groups=_split(c["allow_groups"]),
                block_groups=_split(c["block_groups"]),
                previous_studies=_split(c["previous_studies"]),
                currency=currency,
            )
            state = life.prolific_study_create(
                study=study, user=request.user, draft=draft, study_url=_study_url(request, study)
            )
        except ValidationError as exc:
            errors = getattr(exc, "message_dict", {"__all__": exc.messages})
        except ProlificError as exc:
            messages.error(request, f"Not created: {exc}")
            return _page(study)
        else:
            messages.success(request, f"Prolific study {state.prolific_id} created as a draft.")
            return _page(study)
    else:
        errors = form.errors
    typed = {
        "name": data.get("name", ""),
        "description": data.get("description", ""),
        "reward": data.get("reward", ""),
        "minutes": data.get("minutes", ""),
        "places": data.get("places", ""),
        "devices": data.getlist("devices"),
        **{
            k: _split(data.get(k, "")) for k in ("allow_groups", "block_groups", "previous_studies")
        },
    }
    shown: dict[str, str] = {}
    for field, errs in errors.items():  # a refusal of no box of the form: above the form
        key = field if field in ProlificDraftForm.base_fields else "form"
        shown[key] = " ".join([shown.get(key, ""), *errs]).strip()
    return _study_render(request, study, typed=typed, errors=shown)


def _refused_numbers(request: HttpRequest, study: Study) -> HttpResponse | None:
    """The page again (400) with the gate's refusal shown at the boxes, or None."""
    form = PostedNumbersForm(request.POST)
    if form.is_valid():
        return None
    return _study_render(request, study, errors={"box": " ".join(form.non_field_errors())})


def _confirm(request, study, *, title: str, lines: list[str], action: str, fields: dict):
    context = {"study": study, "title": title, "lines": lines, "action": action, "fields": fields}
    return render(request, "annotation/paid/confirm_prolific.html", context)


@text_gate_exempt  # PostedNumbersForm gates every posted value (core.forms)
@admin_required
@require_POST
def publish(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    refused = _refused_numbers(request, study)
    if refused:
        return refused
    try:
        pilot = _int(request.POST.get("pilot_places") or "0", "pilot_places")
        if not 0 <= pilot <= 10000:
            raise ValidationError({"pilot_places": "Pilot places are 0 to 10,000."})
        state = sel.prolific_state(study)
        if state is None:
            raise ValidationError({"prolific": "Create the Prolific study first."})
        if request.POST.get("confirm") != "1":
            places = pilot or state.total_places
            reward = sel.prolific_reward(state)
            currency = sel.study_pay(study).currency
            preview = sel.cost_preview(study=study, reward=reward or 0, places=places)
            return _confirm(
                request,
                study,
                title=f"Publish {places} place{'s' if places != 1 else ''}"
                + (" (pilot)" if pilot else ""),
                lines=[
                    "Participants can start at once; each approved place is paid the reward "
                    f"({shown(reward, currency)}) and Prolific adds its fee.",
                    *sel.cost_lines(preview, currency),
                ],
                action=reverse("annotation:prolific_publish", args=[study.pk]),
                fields={"pilot_places": pilot},
            )
        life.prolific_study_publish(study=study, user=request.user, pilot_places=pilot)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Not published: {exc}")
    else:
        messages.success(
            request, "Published on Prolific" + (f": a pilot of {pilot}." if pilot else ".")
        )
    return _page(study)


@admin_required
@require_POST
def transition(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    action = request.POST.get("action", "")
    try:
        life.prolific_study_transition(study=study, user=request.user, action=action)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Not done: {exc}")
    else:
        messages.success(
            request, {"PAUSE": "Paused.", "START": "Resumed.", "STOP": "Stopped."}[action]
        )
    return _page(study)


@text_gate_exempt  # PostedNumbersForm gates every posted value (core.forms)
@admin_required
@require_POST
def places(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    refused = _refused_numbers(request, study)
    if refused:
        return refused
    try:
        n = _int(request.POST.get("places", ""), "places")
        if not 1 <= n <= 10000:
            raise ValidationError({"places": "Add 1 to 10,000 places."})
        if request.POST.get("confirm") != "1":
            state = sel.prolific_state(study)
            reward = (sel.prolific_reward(state) if state else None) or sel.study_pay(study).reward
            currency = sel.study_pay(study).currency
            preview = sel.cost_preview(study=study, reward=reward, places=n)
            return _confirm(
                request,
                study,
                title=f"Add {n} place{'s' if n != 1 else ''}",
                lines=[
                    "More participants can start at once; each approved place is paid.",
                    *sel.cost_lines(preview, currency),
                ],
                action=reverse("annotation:prolific_places", args=[study.pk]),
                fields={"places": n},
            )
        state = life.prolific_places_add(study=study, user=request.user, places=n)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"No places added: {exc}")
    else:
        messages.success(request, f"{n} places added ({state.total_places} in all).")
    return _page(study)


@text_gate_exempt  # PilotForm gates every posted value at its field (core.forms)
@admin_required
@require_POST
def pilot(request: HttpRequest, pk: int) -> HttpResponse:
    """A refused box (a number, an amount that is not two decimals) is shown at its field with
    what was typed kept (400), before any confirmation is asked."""
    study = get_object_or_404(Study, pk=pk)
    currency = sel.study_pay(study).currency
    form = PilotForm(request.POST, currency=currency)
    if not form.is_valid():
        return _study_render(request, study, pilot_form=form)
    minutes, reward, n = (form.cleaned_data[k] for k in ("minutes", "reward", "places"))
    said = f"{minutes} min, reward {shown(reward, currency)}"
    try:
        if request.POST.get("confirm") != "1":
            preview = sel.cost_preview(study=study, reward=reward, places=n)
            return _confirm(
                request,
                study,
                title=f"After the pilot: {said}, {n} more places",
                lines=[
                    "The estimated time and reward change on Prolific and in the pay terms.",
                    *sel.cost_lines(preview, currency),
                ],
                action=reverse("annotation:prolific_pilot", args=[study.pk]),
                fields={"minutes": minutes, "reward": f"{reward:.2f}", "places": n},
            )
        life.pilot_confirm(study=study, user=request.user, minutes=minutes, reward=reward, places=n)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Not changed: {exc}")
    else:
        messages.success(request, f"Pilot confirmed: {said}, {n} places added.")
    return _page(study)


@researcher_required
@require_POST
def sync(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=pk)
    try:
        life.prolific_study_sync(study=study, user=request.user)
    except ValidationError as exc:
        messages.error(request, validation_text(exc))
    except ProlificError as exc:
        messages.error(request, f"Could not read Prolific: {exc}")
    else:
        messages.success(request, "Read from Prolific.")
    return _page(study)


# --- webhooks ------------------------------------------------------------------------------------


@admin_required
def hooks_page(request: HttpRequest) -> HttpResponse:
    subscriptions, error = [], ""
    if request.method == "POST":
        try:
            if request.POST.get("remove"):
                hooks.subscription_delete(
                    user=request.user, subscription_id=request.POST.get("remove", "")
                )
                messages.success(request, "Subscription removed.")
            else:
                added = hooks.subscriptions_create(user=request.user)
                messages.success(
                    request,
                    f"Subscribed: {', '.join(added)}." if added else "Already subscribed.",
                )
        except ValidationError as exc:
            messages.error(request, validation_text(exc))
        except ProlificError as exc:
            messages.error(request, f"Not done: {exc}")
        return redirect(reverse("annotation:prolific_hooks") + "?load=1")
    if request.GET.get("load") == "1":
        try:
            subscriptions = hooks.subscriptions_list(user=request.user)
        except ValidationError as exc:
            error = validation_text(exc)
        except ProlificError as exc:
            error = str(exc)
    context = {
        "url": hooks.webhook_url(),
        "https": hooks.webhook_url().startswith("https://"),
        "workspace": hooks.workspace_id(),
        "subscriptions": subscriptions,
        "listed": request.GET.get("load") == "1",
        "error": error,
        "deliveries": ProlificDelivery.objects.all()[:50],
        "calls": ProlificCall.objects.filter(study__isnull=True).select_related("user")[:50],
    }
    return render(request, "annotation/paid/prolific_hooks.html", context)


@csrf_exempt
@require_POST
def hook_receive(request: HttpRequest) -> HttpResponse:
    """Prolific's deliveries: signed, never a session; answered at once, applied by a task."""
    received = hooks.delivery_receive(headers=request.headers, body=request.body)
    return HttpResponse(received.message, status=received.status, content_type="text/plain")
