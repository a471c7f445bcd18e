"""Project-wide pages: home and the health check."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.dashboard import home_cards
from core.roles import is_researcher


def home(request: HttpRequest) -> HttpResponse:
    cards = home_cards(user=request.user)
    return render(
        request,
        "home.html",
        {
            "can_browse": is_researcher(request.user),
            "stages": [c for c in cards if c.key != "try"],
            "try_card": next((c for c in cards if c.key == "try"), None),
        },
    )


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")
