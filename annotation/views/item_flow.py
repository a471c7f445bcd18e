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
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Annotation, Participant, StudyItem
from annotation.pages.annotator import item_page_context, study_page_url
from annotation.selectors.annotator import Refused, Visitor, annotator_for
from annotation.selectors.flow import assignment_saved_state
from annotation.selectors.forms import submitted_answer_lines
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import (
    SubmissionRefused,
    annotation_submit_posted,
    assignment_heartbeat,
    draft_save,
    label_from_post,
)
from annotation.views.annotator import annotator_view, stage_url
from core.middleware import text_gate_exempt
from core.text import strip_controls

Stage = Participant.Stage


@annotator_view
def item_page(request: HttpRequest, visitor: Visitor) -> HttpResponse:
    """The participant's current item (claimed now when none is open), with what a refused
    submit kept for it; a redirect when the participant's stage is elsewhere."""
    annotator = annotator_for(
        visitor, stages=(Stage.QUALIFICATION, Stage.WORKING), with_assignment_state=True
    )
    study, participant = annotator.study, annotator.participant
    assignment = participant_current_assignment(participant=participant)
    if assignment is None:
        participant.refresh_from_db()
        if participant.stage == Stage.WORKING:  # the study is paused or closed meanwhile
            raise Refused(
                study.status,
                "This study is not accepting work right now. Your answers so far are saved.",
                study=study,
            )
        return redirect(stage_url(study.slug, participant.stage))
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


item = require_http_methods(["GET"])(item_page)


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


def _posted(request: HttpRequest) -> dict[str, list[str]]:
    return {key: request.POST.getlist(key) for key in request.POST}


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
            response = item_page(request, slug)
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
@annotator_view
def submit(request: HttpRequest, visitor: Visitor, assignment_id: int) -> HttpResponse:
    try:  # the service finds the visitor's assignment, its row locked, and stores the answer
        result = annotation_submit_posted(
            visitor=visitor,
            assignment_id=assignment_id,
            data=_posted(request),
            active_ms=_int(request.POST.get("active_ms")),
        )
    except SubmissionRefused as refusal:
        if refusal.item_gone:  # returned to the pool and completed by others: move on
            for message in refusal.messages:
                messages.error(request, message)
        else:
            _keep(request, assignment_id, refusal.label, refusal.messages, refusal.fields)
        return redirect("annotation:item", visitor.slug)
    if not result.created:  # submitted before (another tab): show the first answer
        request.session[_kept_key(assignment_id)] = {"state": _typed(result.label), "errors": []}
        return redirect("annotation:submitted", visitor.slug, assignment_id)
    for notice in result.notices:
        messages.warning(request, notice)
    if result.annotation.item.kind != StudyItem.Kind.REGULAR:  # may end a qualification/session
        return redirect(stage_url(visitor.slug, result.stage))
    return HttpResponseRedirect(study_page_url("item", visitor.slug))


@require_http_methods(["GET"])
@annotator_view
def submitted(request: HttpRequest, visitor: Visitor, assignment_id: int) -> HttpResponse:
    """An item submitted before (from another tab): its first answer, kept, and what this tab
    had typed, to copy from; then on to the next item."""
    annotator = annotator_for(visitor, assignment_id=assignment_id)
    study, assignment = annotator.study, annotator.assignment
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
@annotator_view
def draft(request: HttpRequest, visitor: Visitor, assignment_id: int) -> HttpResponse:
    assignment = annotator_for(visitor, assignment_id=assignment_id).assignment
    try:
        saved = draft_save(
            assignment=assignment,
            label=label_from_post(assignment=assignment, data=_posted(request))[0],
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
@annotator_view
def beat(request: HttpRequest, visitor: Visitor, assignment_id: int) -> HttpResponse:
    assignment = annotator_for(visitor, assignment_id=assignment_id).assignment
    assignment_heartbeat(assignment=assignment, active_ms=_int(request.POST.get("active_ms")))
    return HttpResponse(status=204)
