"""The annotator flow: entry → consent → codebook and training → (items: :mod:`.item_flow`)
→ completion.

Thin views over the services (:mod:`annotation.services.flow`, ``.study``) and the page contexts
of :mod:`annotation.pages.annotator`. Each finds its participant with the one lookup,
:func:`annotation.selectors.annotator.annotator_for`; what the flow's views share (the
participant's signed cookie, the stage's page, a refusal's page) is in
:mod:`annotation.views.annotator`. A participant is known by a signed cookie (set at the
entry) or by their account; they only ever reach their own assignments.
"""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation import conf
from annotation.models import Participant, Study
from annotation.pages.annotator import (
    consent_context,
    final_context,
    training_context,
)
from annotation.selectors.annotator import (
    Refused,
    Visitor,
    annotator_for,
    participant_for_user,
)
from annotation.selectors.codebook import study_codebook
from annotation.selectors.forms import form_codebook
from annotation.selectors.prolific_study import final_code
from annotation.services import study as study_services
from annotation.services.flow import participant_consent, participant_finish_training
from annotation.views.annotator import (
    annotator_view,
    pending_entry,
    refused,
    stage_url,
    with_participant,
    with_pending_entry,
)
from core.limits import client_ip

Stage = Participant.Stage


# A link followed creates nothing: it resumes the link's or the account's participant, or keeps
# a checked entry in a signed cookie for the consent POST, which creates the participant.
_ENTRY_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


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
        return with_pending_entry(request, response, study, params)
    target = redirect(stage_url(study.slug, participant.stage))
    return with_participant(request, target, participant)


@require_http_methods(["GET", "POST"])
@annotator_view
def consent(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    try:
        annotator = annotator_for(visitor, stages=(Stage.CONSENT,))
        study, participant = annotator.study, annotator.participant
    except Refused as refusal:  # no participant yet: the entry kept at the link starts one
        pending = pending_entry(request, visitor.slug)
        if pending is None:
            raise
        study, participant = refusal.study, None
    if request.method == "POST":
        if participant is None:
            try:
                participant, _ = _entering(request, study, create=True, params=pending)
            except study_services.EntryRefused as refusal:
                return refused(request, study, refusal.reason, refusal.message)
        agree = request.POST.get("consent") == "agree"
        participant_consent(participant=participant, agree=agree)
        target = redirect(stage_url(study.slug, participant.stage))
        return with_participant(request, target, participant)
    context = consent_context(study=study, participant=participant)
    return render(request, "annotation/consent.html", context)


@require_http_methods(["GET", "POST"])
@annotator_view
def training(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    review = request.GET.get("review") == "1"  # the codebook, reachable again from any item page
    annotator = annotator_for(visitor, stages=() if review else (Stage.TRAINING,))
    study, participant = annotator.study, annotator.participant
    if request.method == "POST":
        participant_finish_training(participant=participant)
        return redirect(stage_url(study.slug, participant.stage))
    context = training_context(study=study, participant=participant, review=review)
    return render(request, "annotation/training.html", context)


@require_http_methods(["GET"])
@annotator_view
def codebook_partial(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    study = annotator_for(visitor).study
    context = {
        "codebook": study_codebook(study=study),
        "form_codebook": form_codebook(study=study),
        "full": True,
    }
    return render(request, "annotation/_codebook.html", context)


def _final(request: HttpRequest, visitor: Visitor, stage: str, template: str) -> HttpResponse:
    annotator = annotator_for(visitor, stages=(stage,))
    study, participant = annotator.study, annotator.participant
    code = final_code(study=study, participant=participant)
    # back to Prolific only from a Prolific study (one with a Prolific id) that the participant
    # entered from Prolific; any other (the demo, an account's study) shows its code and stays
    from_prolific = bool(participant.prolific_pid and study.prolific_study_id)
    redirect_url = conf.prolific_completion_url(code) if from_prolific else ""
    context = final_context(
        study=study, participant=participant, code=code, redirect_url=redirect_url
    )
    return render(request, template, context)


@annotator_view
def done(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    return _final(request, visitor, Stage.DONE, "annotation/done.html")


@annotator_view
def screened_out(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    return _final(request, visitor, Stage.SCREENED_OUT, "annotation/screened_out.html")


@annotator_view
def declined(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    study = annotator_for(visitor, stages=(Stage.DECLINED,)).study
    return render(request, "annotation/declined.html", {"study": study})


def returned(request: HttpRequest, slug: str) -> HttpResponse:
    """The page of a participant whose place ended on Prolific (returned, timed out, rejected)."""
    study = get_object_or_404(Study, slug=slug)
    return render(request, "annotation/returned.html", {"study": study})
