"""What every view of the annotator flow shares: who the request comes from (:func:`visitor_of`;
the participant's signed cookie is read and set here only), the decorator that hands a view
its :class:`~annotation.selectors.annotator.Visitor` and turns the lookup's refusals and
redirects into pages (:func:`annotator_view`), the page of a participant's stage and a
refusal's page.

A view of the flow reads as a straight line: the visitor, the one lookup
(:func:`annotation.selectors.annotator.annotator_for`) or the one service that does it in its
own transaction (a submit), then the page.
"""

from __future__ import annotations

from functools import wraps

from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotation.models import Participant, Study
from annotation.pages.annotator import study_page_url
from annotation.selectors.annotator import NotHere, Refused, Visitor

Stage = Participant.Stage

_COOKIE_SALT = "annotation.participant"
_ENTRY_SALT = "annotation.pending-entry"
_COOKIE_MAX_AGE = 60 * 60 * 24 * 30


def _cookie_name(slug: str) -> str:
    return f"h2r_p_{slug}"


def _entry_cookie_name(slug: str) -> str:
    return f"h2r_e_{slug}"


def visitor_of(request: HttpRequest, slug: str) -> Visitor:
    """Who the request says it is: the participant id of the study's signed cookie (HMAC with
    SECRET_KEY; no session row needed) and its account."""
    value = request.get_signed_cookie(_cookie_name(slug), default=None, salt=_COOKIE_SALT)
    participant_id = int(value) if value and value.isdigit() else None
    return Visitor(slug=slug, participant_id=participant_id, user=request.user)


def annotator_view(view):
    """A view of the flow: called as ``view(request, visitor, ...)`` for the URL's study slug;
    Refused becomes the refusal's page, NotHere a redirect to the participant's stage, an
    unknown slug a 404."""

    @wraps(view)
    def page(request: HttpRequest, slug: str, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, visitor_of(request, slug), *args, **kwargs)
        except NotHere as elsewhere:
            study, participant = elsewhere.annotator.study, elsewhere.annotator.participant
            return redirect(stage_url(study.slug, participant.stage))
        except Refused as refusal:
            return refused(request, refusal.study, refusal.reason, refusal.message)
        except Study.DoesNotExist:
            raise Http404("No study has this address.") from None

    return page


_STAGE_PAGE = {
    Stage.CONSENT: "consent",
    Stage.TRAINING: "training",
    Stage.QUALIFICATION: "item",
    Stage.WORKING: "item",
    Stage.DONE: "done",
    Stage.SCREENED_OUT: "screened_out",
    Stage.DECLINED: "declined",
    Stage.RETURNED: "returned",
}


def stage_url(slug: str, stage: str) -> str:
    """The page of the flow for a participant in ``stage``."""
    return study_page_url(_STAGE_PAGE[stage], slug)


_REFUSAL_STATUS = {"bad_link": 400, "no_session": 403, "excluded": 403, "full": 409}
_REFUSAL_STATUS |= {"session_conflict": 409, "closed": 410, "rate_limited": 429, "paused": 503}


def refused(request: HttpRequest, study: Study | None, reason: str, message: str) -> HttpResponse:
    """The refusal's page; ``reason`` picks its status."""
    status = _REFUSAL_STATUS.get(reason, 400)
    return render(
        request,
        "annotation/refused.html",
        {"study": study, "reason": reason, "message": message},
        status=status,
    )


# --- the cookies the entry sets ---------------------------------------------------------------


def entry_token(params: dict) -> str:
    """The pending entry as a cookie-safe token: Django's signing (``signing.dumps``: URL-safe
    base64 of the compressed JSON, a timestamp and an HMAC with SECRET_KEY, joined by ``:``),
    so every cookie parser, proxy and client keeps it as sent."""
    return signing.dumps(params, salt=_ENTRY_SALT, compress=True)


def pending_entry(request: HttpRequest, slug: str) -> dict | None:
    """The entry a followed link left for the consent (a participant is created there); None
    when there is none, or its token is tampered with, foreign or older than the cookie."""
    value = request.COOKIES.get(_entry_cookie_name(slug))
    if not value:
        return None
    try:
        params = signing.loads(value, salt=_ENTRY_SALT, max_age=_COOKIE_MAX_AGE)
    except signing.BadSignature:  # includes an expired signature
        return None
    return params if isinstance(params, dict) else None


def with_pending_entry(request: HttpRequest, response, study: Study, params: dict) -> HttpResponse:
    """``response`` keeping a checked entry for the consent, and no participant's cookie."""
    _set_cookie(
        request, response, _entry_cookie_name(study.slug), entry_token(params), study, signed=False
    )
    response.delete_cookie(_cookie_name(study.slug), path=f"/study/s/{study.slug}/")
    return response


def with_participant(request: HttpRequest, response, participant: Participant) -> HttpResponse:
    """``response`` with the participant's signed cookie (and no pending entry left)."""
    study = participant.study
    response.delete_cookie(_entry_cookie_name(study.slug), path=f"/study/s/{study.slug}/")
    _set_cookie(request, response, _cookie_name(study.slug), str(participant.pk), study)
    return response


def _set_cookie(
    request: HttpRequest, response, name: str, value: str, study: Study, *, signed: bool = True
) -> None:
    """A cookie of this study's pages; ``signed``: signed here (HMAC with SECRET_KEY), else
    ``value`` is a token already signed (:func:`entry_token`)."""
    setter = response.set_signed_cookie if signed else response.set_cookie
    extra = {"salt": _COOKIE_SALT} if signed else {}
    setter(
        name,
        value,
        **extra,
        max_age=_COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
        path=f"/study/s/{study.slug}/",
    )
