"""Project-wide pages: home and the health check."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from core import health
from core.dashboard import home_cards
from core.roles import is_researcher


def home(request: HttpRequest) -> HttpResponse:
    cards = home_cards(user=request.user)
    return render(
        request,
        "home.html",
        {
            "can_browse": is_researcher(request.user),
            "stages": [c for c in cards if c.key not in ("try", "studies")],
            "try_card": next((c for c in cards if c.key == "try"), None),
            "studies_card": next((c for c in cards if c.key == "studies"), None),
        },
    )


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on pages without a ``<link rel=icon>`` (the
    console's): the static icon."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers (no dependency checked)."""
    return HttpResponse("ok", content_type="text/plain")


def _health_response(result: dict) -> JsonResponse:
    return JsonResponse(result, status=200 if result["ok"] else 503)


@never_cache
@require_safe
def healthz_ready(request: HttpRequest) -> JsonResponse:
    """Readiness of a web process: 200 when its database and broker answer, else 503."""
    return _health_response(health.web_health())


@never_cache
@require_safe
def healthz_workers(request: HttpRequest) -> JsonResponse:
    """200 when a worker is alive (``?queue=gpu``: one consuming that queue), else 503."""
    queue = (request.GET.get("queue") or "").strip()[:100] or None
    return _health_response(health.workers_health(queue=queue))
