"""The annotator flow: entry → consent → codebook and training → (items: :mod:`.item_flow`)
→ completion.

Thin views over the services (:mod:`annotation.services.flow`, ``.study``) and the page contexts
of :mod:`annotation.selectors.flow_pages`, and the helpers every page of the flow shares (the
participant's signed cookie, the stage's page, a refusal's page). A participant is known by a
signed cookie (Prolific entry) or by their account; they only ever reach their own assignments.
"""

from __future__ import annotations

import json

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation import conf
from annotation.models import Participant, Study
from annotation.selectors.codebook import study_codebook
from annotation.selectors.flow import (
    participant_for_session,
    participant_for_slug,
    participant_for_user,
)
from annotation.selectors.flow_pages import (
    consent_context,
    final_context,
    training_context,
)
from annotation.selectors.forms import (
    form_codebook,
)
from annotation.selectors.prolific_study import final_code
from annotation.services import study as study_services
from annotation.services.flow import participant_consent, participant_finish_training
from core.limits import client_ip

Stage = Participant.Stage


_COOKIE_SALT = "annotation.participant"
_COOKIE_MAX_AGE = 60 * 60 * 24 * 30


def _cookie_name(slug: str) -> str:
    return f"h2r_p_{slug}"


def cookie_participant_id(request: HttpRequest, slug: str) -> int | None:
    """The participant id from a signed cookie (HMAC with SECRET_KEY; no session row needed)."""
    value = request.get_signed_cookie(_cookie_name(slug), default=None, salt=_COOKIE_SALT)
    return int(value) if value and value.isdigit() else None


def _participant(request: HttpRequest, study: Study) -> Participant | None:
    participant = participant_for_session(
        study=study, participant_id=cookie_participant_id(request, study.slug)
    )
    if participant is None and study.accepts_accounts:
        participant = participant_for_user(study=study, user=request.user)
    return participant


def stage_url(study: Study, participant: Participant) -> str:
    name = {
        Stage.CONSENT: "consent",
        Stage.TRAINING: "training",
        Stage.QUALIFICATION: "item",
        Stage.WORKING: "item",
        Stage.DONE: "done",
        Stage.SCREENED_OUT: "screened_out",
        Stage.DECLINED: "declined",
        Stage.RETURNED: "returned",
    }[participant.stage]
    return reverse(f"annotation:{name}", args=[study.slug])


_REFUSAL_STATUS = {"bad_link": 400, "no_session": 403, "excluded": 403, "full": 409}
_REFUSAL_STATUS |= {"session_conflict": 409, "closed": 410, "rate_limited": 429, "paused": 503}


def refused(request: HttpRequest, study: Study | None, reason: str, message: str) -> HttpResponse:
    status = _REFUSAL_STATUS.get(reason, 400)
    return render(
        request,
        "annotation/refused.html",
        {"study": study, "reason": reason, "message": message},
        status=status,
    )


def _no_session(request: HttpRequest, study: Study) -> HttpResponse:
    return refused(
        request,
        study,
        "no_session",
        "We could not find your session. Please open the study again from the link on Prolific.",
    )


def load_participant(
    request: HttpRequest, slug: str, *stages: str, with_assignment_state: bool = False
):
    """(study, participant, response): response is set when the participant must go elsewhere."""
    participant = participant_for_slug(
        slug=slug,
        participant_id=cookie_participant_id(request, slug),
        with_assignment_state=with_assignment_state,
    )
    if participant is not None:  # the common case: one query for the participant and the study
        study = participant.study
    else:
        study = get_object_or_404(Study, slug=slug)
        participant = _participant(request, study)
    if participant is None:
        return study, None, _no_session(request, study)
    if stages and participant.stage not in stages:
        return study, participant, redirect(stage_url(study, participant))
    return study, participant, None


# A link followed creates nothing: it resumes the link's or the account's participant, or keeps
# a checked entry in a signed cookie for the consent POST, which creates the participant.
_ENTRY_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def _entry_cookie(slug: str) -> str:
    return f"h2r_e_{slug}"


def _entering(request: HttpRequest, study: Study, *, create: bool, params=None):
    """The entry's participant (resumed, or created when ``create``) and the entry's
    parameters; raises EntryRefused. ``params``: the pending entry kept at the link."""
    user = request.user
    if user.is_authenticated and study.accepts_accounts:
        own = participant_for_user(study=study, user=user)
        if own is not None:  # one person, one participant per study
            return own, {}
    if params is None:
        wants_prolific = "PROLIFIC_PID" in request.GET or not study.accepts_accounts
        params = {k: request.GET.get(k, "") for k in _ENTRY_PARAMS} if wants_prolific else {}
    if params:
        participant = study_services.participant_enter_prolific(
            study=study, params=params, client_ip=client_ip(request), create=create
        )
    elif not user.is_authenticated:  # an account's entry, signed out since
        raise study_services.EntryRefused("no_session", "Please log in and open the study again.")
    else:
        participant = study_services.participant_enter_account(
            study=study, user=user, create=create
        )
    return participant, params


@require_http_methods(["GET"])
def enter(request: HttpRequest, slug: str) -> HttpResponse:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        return refused(
            request, None, "bad_link", "This study link is wrong: no study has this address."
        )
    signed_out = not request.user.is_authenticated
    if signed_out and "PROLIFIC_PID" not in request.GET and study.accepts_accounts:
        return redirect_to_login(request.get_full_path())
    try:
        participant, params = _entering(request, study, create=False)
    except study_services.EntryRefused as refusal:
        return refused(request, study, refusal.reason, refusal.message)
    if participant is None:  # a new participant: created when they consent
        response = redirect("annotation:consent", study.slug)
        _set_cookie(request, response, _entry_cookie(study.slug), json.dumps(params), study)
        response.delete_cookie(_cookie_name(study.slug), path=f"/study/s/{study.slug}/")
        return response
    return _with_participant(request, redirect(stage_url(study, participant)), participant)


def _pending_entry(request: HttpRequest, slug: str) -> dict | None:
    value = request.get_signed_cookie(_entry_cookie(slug), default=None, salt=_COOKIE_SALT)
    try:
        params = json.loads(value) if value else None
    except ValueError:
        return None
    return params if isinstance(params, dict) else None


def _with_participant(request: HttpRequest, response, participant: Participant) -> HttpResponse:
    """``response`` with the participant's signed cookie (and no pending entry left)."""
    study = participant.study
    response.delete_cookie(_entry_cookie(study.slug), path=f"/study/s/{study.slug}/")
    _set_cookie(request, response, _cookie_name(study.slug), str(participant.pk), study)
    return response


def _set_cookie(request: HttpRequest, response, name: str, value: str, study: Study) -> None:
    """A signed cookie of this study's pages (HMAC with SECRET_KEY)."""
    response.set_signed_cookie(
        name,
        value,
        salt=_COOKIE_SALT,
        max_age=_COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
        path=f"/study/s/{study.slug}/",
    )


@require_http_methods(["GET", "POST"])
def consent(request: HttpRequest, slug: str) -> HttpResponse:
    study, participant, response = load_participant(request, slug, Stage.CONSENT)
    pending = _pending_entry(request, slug) if participant is None else None
    if pending is None and response:
        return response
    if request.method == "POST":
        if participant is None:  # the entry kept at the link: the participant starts here
            try:
                participant, _ = _entering(request, study, create=True, params=pending)
            except study_services.EntryRefused as refusal:
                return refused(request, study, refusal.reason, refusal.message)
        agree = request.POST.get("consent") == "agree"
        participant_consent(participant=participant, agree=agree)
        target = redirect(stage_url(study, participant))
        return _with_participant(request, target, participant)
    context = consent_context(study=study, participant=participant)
    return render(request, "annotation/consent.html", context)


@require_http_methods(["GET", "POST"])
def training(request: HttpRequest, slug: str) -> HttpResponse:
    review = request.GET.get("review") == "1"
    if review:  # the codebook, reachable again from any item page
        study, participant, response = load_participant(request, slug)
    else:
        study, participant, response = load_participant(request, slug, Stage.TRAINING)
    if response:
        return response
    if request.method == "POST":
        participant_finish_training(participant=participant)
        return redirect(stage_url(study, participant))
    context = training_context(study=study, participant=participant, review=review)
    return render(request, "annotation/training.html", context)


@require_http_methods(["GET"])
def codebook_partial(request: HttpRequest, slug: str) -> HttpResponse:
    study, _, response = load_participant(request, slug)
    if response:
        return response
    context = {
        "codebook": study_codebook(study=study),
        "form_codebook": form_codebook(study=study),
        "full": True,
    }
    return render(request, "annotation/_codebook.html", context)


def _final(request: HttpRequest, slug: str, stage: str, template: str) -> HttpResponse:
    study, participant, response = load_participant(request, slug, stage)
    if response:
        return response
    code = final_code(study=study, participant=participant)
    # back to Prolific only from a Prolific study (one with a Prolific id) that the participant
    # entered from Prolific; any other (the demo, an account's study) shows its code and stays
    from_prolific = bool(participant.prolific_pid and study.prolific_study_id)
    redirect_url = conf.prolific_completion_url(code) if from_prolific else ""
    context = final_context(
        study=study, participant=participant, code=code, redirect_url=redirect_url
    )
    return render(request, template, context)


def done(request: HttpRequest, slug: str) -> HttpResponse:
    return _final(request, slug, Stage.DONE, "annotation/done.html")


def screened_out(request: HttpRequest, slug: str) -> HttpResponse:
    return _final(request, slug, Stage.SCREENED_OUT, "annotation/screened_out.html")


def declined(request: HttpRequest, slug: str) -> HttpResponse:
    study, _, response = load_participant(request, slug, Stage.DECLINED)
    if response:
        return response
    return render(request, "annotation/declined.html", {"study": study})
