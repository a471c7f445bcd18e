"""The judge leaderboard page (researchers): the leaderboard as last computed, polled while a
worker recomputes it. Thin: the context comes from :mod:`judging.leaderboard.page`."""

from __future__ import annotations

from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from annotation.selectors.dashboard import latest_labelled_study
from core.access import researcher_required
from core.polling import next_poll
from judging.leaderboard.page import leaderboard_page_context
from judging.selectors.verdicts import judges_named
from judging.services.leaderboard import leaderboard_get


def _optional(request: HttpRequest, model: type[Model], param: str):
    """The object whose id the query parameter gives (404 if none has it); None without one."""
    value = request.GET.get(param, "")
    return get_object_or_404(model, pk=int(value)) if value.isdigit() else None


def _study_or_latest(request: HttpRequest) -> Study | None:
    """The ``study`` chosen; without the parameter, the study labelled most recently (so the
    page opens on real numbers); ``study=`` (none chosen) stays none."""
    if "study" not in request.GET:
        return latest_labelled_study()
    return _optional(request, Study, "study")


@researcher_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    """The leaderboard as last computed; a worker recomputes a large one when the data changed
    and the page polls (with back-off) until it is there (:mod:`judging.services.leaderboard`)."""
    study, chosen = _study_or_latest(request), request.GET.getlist("judge")
    got = leaderboard_get(
        judges=judges_named(chosen),
        study=study,
        refresh=request.GET.get("refresh") == "1",
    )
    report = got["report"] or {"study": None, "rows": []}
    context = leaderboard_page_context(study=study, chosen=chosen, report=report)
    poll = next_poll(
        waited=request.GET.get("wait"), seen=request.GET.get("seen"), mark=got["status"]
    )
    params = request.GET.copy()
    for name in ("wait", "seen", "refresh"):
        params.pop(name, None)
    params["wait"], params["seen"] = poll.wait, poll.mark
    context.update(
        board=got,
        poll=poll,
        poll_url=f"{request.path}?{params.urlencode()}",
        empty=not got["report"],
    )
    return render(request, "judging/compare/leaderboard.html", context)
