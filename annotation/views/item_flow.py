"""The item page and what it posts: the item, the submit, a draft, the heartbeat, and the page
of an item submitted before (from another tab).

A submit from the item page's script (htmx, ``HX-Request``) is answered in one request: the next
item's page itself (``HX-Replace-Url`` puts the item's address in the address bar, one history
entry for the item page however many items), or
``HX-Redirect`` to any other page of the flow, where a plain form post gets the redirect (post,
redirect, get). Thin views over :mod:`annotation.services.submission` and
:mod:`annotation.services.assignment`; a participant only ever reaches their own assignments.
"""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from annotation.labels import parse_form
from annotation.models import Annotation, Assignment, Participant, StudyItem
from annotation.selectors.flow import (
    assignment_for_cookie,
    assignment_for_participant,
    assignment_saved_state,
)
from annotation.selectors.flow_pages import item_page_context, study_page_url
from annotation.selectors.forms import item_view, study_form, submitted_answer_lines
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import (
    SubmissionRefused,
    annotation_submit,
    assignment_heartbeat,
    draft_save,
)
from annotation.views.flow import cookie_participant_id, load_participant, refused, stage_url
from core.middleware import text_gate_exempt
from core.text import strip_controls

Stage = Participant.Stage


@require_http_methods(["GET"])
def item(request: HttpRequest, slug: str) -> HttpResponse:
    return _item_page(request, slug)


def _item_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant's current item (claimed now when none is open), with what a refused
    submit kept for it; a redirect when the participant's stage is elsewhere."""
    study, participant, response = load_participant(
        request, slug, Stage.QUALIFICATION, Stage.WORKING, with_assignment_state=True
    )
    if response:
        return response
    assignment = participant_current_assignment(participant=participant)
    if assignment is None:
        participant.refresh_from_db()
        if participant.stage == Stage.WORKING:  # the study is paused or closed meanwhile
            return refused(
                request,
                study,
                study.status,
                "This study is not accepting work right now. Your answers so far are saved.",
            )
        return redirect(stage_url(study, participant))
    if getattr(assignment, "is_new", False) and assignment.item.kind == StudyItem.Kind.GOLD:
        participant.refresh_from_db(fields=["n_gold_served"])  # counted by the claim just now
    kept = request.session.pop(_kept_key(assignment.pk), None) if _has_session(request) else None
    context = item_page_context(
        study=study,
        participant=participant,
        assignment=assignment,
        state=kept["state"] if kept else assignment_saved_state(assignment=assignment),
        errors=kept["errors"] if kept else (),
    )
    context["field_errors"] = (kept or {}).get("fields") or {}
    response = render(request, "annotation/item.html", context)
    # never from a cache: the back button or a restored tab asks again for the current item
    # (a cached page would show an item submitted since, its form stale)
    add_never_cache_headers(response)
    return response


# A refused submit redirects to the item page (no 405 on reload; in place: is answered with
# it), which shows the refusal and what was typed: both ride in the session for that one page
# view, never in a domain row.
def _kept_key(assignment_id: int) -> str:
    return f"h2r_kept_{assignment_id}"


def _has_session(request: HttpRequest) -> bool:
    """A session to read: the browser sent its cookie, or this request wrote one (a submit's
    refusal answered in place)."""
    if request.COOKIES.get(settings.SESSION_COOKIE_NAME) is not None:
        return True
    return getattr(request, "session", None) is not None and request.session.modified


def _typed(label) -> dict:
    """What the participant typed, with the characters the text gate refuses taken out."""
    state = label.as_draft()
    state["comments"] = strip_controls(state["comments"])[0]
    state["failures"] = [
        {**f, "description": strip_controls(f.get("description", ""))[0]} for f in state["failures"]
    ]
    return state


def _keep(request: HttpRequest, assignment_id: int, label, errors: list[str], fields=None) -> None:
    request.session[_kept_key(assignment_id)] = {
        "state": _typed(label),
        "errors": list(errors),
        "fields": dict(fields or {}),  # the page's field -> its refusal, shown at the field
    }


def _own_assignment(request: HttpRequest, slug: str, assignment_id: int, *, lock: bool = False):
    """(study, participant, assignment, response); ``lock``: the assignment's row locked."""
    assignment = assignment_for_cookie(
        slug=slug,
        participant_id=cookie_participant_id(request, slug),
        assignment_id=assignment_id,
        lock=lock,
    )
    if assignment is not None:  # the common case: one query for everything a save needs
        participant = assignment.participant
        return participant.study, participant, assignment, None
    study, participant, response = load_participant(request, slug)
    if response:
        return study, participant, None, response
    assignment = assignment_for_participant(
        participant=participant, assignment_id=assignment_id, lock=lock
    )
    if assignment is None:
        return (
            study,
            participant,
            None,
            refused(request, study, "no_session", "This item is not yours."),
        )
    return study, participant, assignment, None


def _label(request: HttpRequest, assignment: Assignment):
    """The posted answer, and the study's form and the item's view that read it (built once
    per request and handed to the service)."""
    data = {key: request.POST.getlist(key) for key in request.POST}
    form = study_form(study=assignment.participant.study)
    view = item_view(item=assignment.item, participant_id=assignment.participant_id, form=form)
    return parse_form(data, form=form, item=view), form, view


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _in_place(view):
    """A submit from the item page's script answered in one request: a redirect to the item
    page becomes that page (the next item, or this one with its refusal), with ``HX-Replace-Url``;
    a redirect elsewhere becomes ``HX-Redirect`` (the browser then loads that page). A plain
    form post keeps its redirect."""

    @wraps(view)
    def answer(request: HttpRequest, slug: str, *args, **kwargs) -> HttpResponse:
        response = view(request, slug, *args, **kwargs)
        if request.headers.get("HX-Request") != "true" or not response.has_header("Location"):
            return response
        url = response["Location"]
        item_url = study_page_url("item", slug)
        if url == item_url:
            response = _item_page(request, slug)
            if not response.has_header("Location"):
                response["HX-Replace-Url"] = item_url
                return response
            url = response["Location"]  # the participant's stage moved on: that page
        moved_on = HttpResponse(status=200)
        moved_on["HX-Redirect"] = url
        return moved_on

    return answer


@text_gate_exempt  # the service gates the free text; the item page shows why
@require_POST
@_in_place
def submit(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    try:
        # one transaction from the first read, which locks the assignment's row (read once)
        with transaction.atomic():
            study, participant, assignment, response = _own_assignment(
                request, slug, assignment_id, lock=True
            )
            if response:
                return response
            label, form, view = _label(request, assignment)
            result = annotation_submit(
                assignment=assignment,
                label=label,
                active_ms=_int(request.POST.get("active_ms")),
                form=form,
                view=view,
                row_locked=True,
            )
    except SubmissionRefused as refusal:
        if refusal.item_gone:  # returned to the pool and completed by others: move on
            for message in refusal.messages:
                messages.error(request, message)
            return redirect("annotation:item", study.slug)
        _keep(request, assignment.pk, label, refusal.messages, refusal.fields)
        return redirect("annotation:item", study.slug)
    if not result.created:  # submitted before (another tab): show the first answer
        request.session[_kept_key(assignment.pk)] = {"state": _typed(label), "errors": []}
        return redirect("annotation:submitted", study.slug, assignment.pk)
    for notice in result.notices:
        messages.warning(request, notice)
    if assignment.item.kind != "regular":  # a known item may end the qualification or session
        participant.refresh_from_db()
        return redirect(stage_url(study, participant))
    return HttpResponseRedirect(study_page_url("item", study.slug))


@require_http_methods(["GET"])
def submitted(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """An item submitted before (from another tab): its first answer, kept, and what this tab
    had typed, to copy from; then on to the next item."""
    study, _, assignment, response = _own_assignment(request, slug, assignment_id)
    if response:
        return response
    annotation = Annotation.objects.filter(assignment_id=assignment.pk).first()
    if annotation is None:  # not submitted after all: back to the item
        return redirect("annotation:item", study.slug)
    kept = request.session.get(_kept_key(assignment.pk)) if _has_session(request) else None
    typed = (kept or {}).get("state")
    context = {
        "study": study,
        "annotation": annotation,
        "typed": typed,
        **submitted_answer_lines(study=study, annotation=annotation, typed=typed),
    }
    return render(request, "annotation/submitted.html", context)


@text_gate_exempt
@require_POST
def draft(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    _, _, assignment, response = _own_assignment(request, slug, assignment_id)
    if response:
        return response
    try:
        saved = draft_save(
            assignment=assignment,
            label=_label(request, assignment)[0],
            active_ms=_int(request.POST.get("active_ms")),
        )
    except SubmissionRefused as refusal:  # text the gate refuses: nothing saved, say why
        # the page shows each reason at its field and keeps the text (static/js/annotate.js)
        message = "Draft not saved: " + "; ".join(refusal.messages)
        return JsonResponse({"message": message, "fields": refusal.fields}, status=422)
    text = (
        f"Draft saved {timezone.localtime().strftime('%H:%M:%S')}" if saved else "Already submitted"
    )
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


@require_POST
def beat(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    _, _, assignment, response = _own_assignment(request, slug, assignment_id)
    if response:
        return response
    assignment_heartbeat(assignment=assignment, active_ms=_int(request.POST.get("active_ms")))
    return HttpResponse(status=204)
