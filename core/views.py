"""Project-wide pages: home and the health check."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.roles import is_researcher


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"can_browse": is_researcher(request.user)})


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")
