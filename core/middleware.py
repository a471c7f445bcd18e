"""Request limits at the door: a request larger than its limit (core.limits) gets a 413 naming
the limit, and query parameters and form fields go through the text gate (core.text) — an
HTML page, or JSON on /api/; and the Content-Security-Policy header, built once."""

from __future__ import annotations

from fnmatch import fnmatchcase

import csp.middleware
from csp.constants import HEADER
from csp.constants import HEADER_REPORT_ONLY as HEADER_RO
from csp.utils import build_policy
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from core.forms import form_gates_itself
from core.limits import human_bytes, upload_max_bytes
from core.text import text_error


def _limit_for(request: HttpRequest) -> tuple[int, str]:
    if request.content_type == "multipart/form-data" or request.META.get(
        "CONTENT_TYPE", ""
    ).startswith("multipart/"):
        return upload_max_bytes(), "UPLOAD_MAX_BYTES"
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0), "DATA_UPLOAD_MAX_BYTES"


def body_limit(max_bytes: int, what: str):
    """Mark a view whose requests are at most ``max_bytes`` (``what``: what the limit is
    for, as the 413 page says it): checked at the door, from Content-Length, before the body
    is read."""

    def mark(view):
        view.body_max_bytes, view.body_limit_what = max_bytes, what
        return view

    return mark


def _view_limit(request: HttpRequest) -> tuple[int, str] | None:
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return None
    limit = getattr(match.func, "body_max_bytes", None)
    return (limit, match.func.body_limit_what) if limit else None


def too_large(request: HttpRequest, limit: int, setting: str, what: str = "") -> HttpResponse:
    if what:
        message = (
            f"This request is larger than {what} accepts: the limit is {human_bytes(limit)}. "
            "Shorten what you typed or send a smaller file."
        )
    else:
        message = (
            f"This request is larger than the server accepts: the limit is {human_bytes(limit)} "
            f"(setting {setting}). Split the file or ask an administrator to raise the limit."
        )
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message, "limit_bytes": limit}, status=413)
    context = {"message": message, "limit": human_bytes(limit)}
    return render(request, "413.html", context, status=413)


class UploadLimitMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit, setting = _limit_for(request)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit and length > limit:
            return too_large(request, limit, setting)
        own = _view_limit(request) if request.method == "POST" and length else None
        if own and length > own[0]:
            return too_large(request, own[0], "", own[1])
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, RequestDataTooBig):  # a body without Content-Length
            limit, setting = _limit_for(request)
            return too_large(request, limit, setting)
        return None


class BrokerDownMiddleware:
    """A page that launches work while the task broker cannot be reached answers 503 naming
    the broker (:class:`core.runs.dispatch.BrokerUnavailable`; the launch's transaction rolled
    back, so nothing was started). The API answers the same through ``core.errors``."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        from core.runs.dispatch import BrokerUnavailable

        if isinstance(exception, BrokerUnavailable):
            return render(request, "503.html", {"message": str(exception)}, status=503)
        return None


# --- the text gate at the door (core.text) ---------------------------------------------------


def text_gate_exempt(view):
    """Mark a view that puts its form fields through the text gate itself (with a friendlier
    page than a 400: the annotator's submit and draft)."""
    view.text_gate_exempt = True
    return view


def text_gate_exempt_fields(*patterns: str):
    """Mark a view that puts the form fields matching ``patterns`` (``fnmatch``, e.g. ``f-*``)
    through the text gate itself, as field errors on its page; the door still checks the
    rest."""

    def mark(view):
        view.text_gate_fields = patterns
        return view

    return mark


def _form_fields(request: HttpRequest):
    yield from (("query parameter " + k, v) for k, vs in request.GET.lists() for v in vs)
    if request.method == "POST" and request.content_type in (
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        yield from (("field " + k, v) for k, vs in request.POST.lists() for v in vs)


class TextGateMiddleware:
    """Query parameters everywhere, and form fields of form posts, through the text gate: a
    refused character is a 400 naming the parameter or field (JSON bodies of the API go
    through core.parsers)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs):
        check_form = not form_gates_itself(view)
        own = getattr(view, "text_gate_fields", ())
        for name, value in _form_fields(request):
            if name.startswith("field ") and (
                not check_form or any(fnmatchcase(name[6:], p) for p in own)
            ):
                continue
            for checked in (name, value):
                message = text_error(checked, name)
                if message:
                    return refused_text(request, name.split(" ", 2)[-1], message)
        return None


def refused_text(request: HttpRequest, field: str, message: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({field: [message]}, status=400)
    return render(request, "400.html", {"message": message}, status=400)


_PER_RESPONSE_CSP = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
    "_csp_exempt",
    "_csp_exempt_ro",
)


class CSPMiddleware(csp.middleware.CSPMiddleware):
    """django-csp's middleware with the site-wide policy built once per configuration.

    django-csp builds the header from the settings on every response (a third of the middleware
    stack's time on the annotator's item path). Where a response has nothing of its own (no
    ``csp_*`` decorator, no exemption, no nonce asked for) the header is the one built from the
    settings, kept until ``CONTENT_SECURITY_POLICY`` or its report-only twin is another object;
    anything else goes through django-csp unchanged."""

    _built: tuple = (None, None, "", "")  # (policy, report-only policy, header, header ro)

    def process_response(self, request, response):
        if getattr(request, "_csp_nonce", None) is not None or any(
            hasattr(response, name) for name in _PER_RESPONSE_CSP
        ):
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response  # django-csp leaves the debug pages alone
        policy = getattr(settings, "CONTENT_SECURITY_POLICY", None)
        policy_ro = getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
        built = self._built
        if built[0] is not policy or built[1] is not policy_ro:
            built = (policy, policy_ro, build_policy(), build_policy(report_only=True))
            type(self)._built = built
        path = request.path_info
        for header, value, config in ((HEADER, built[2], policy), (HEADER_RO, built[3], policy_ro)):
            prefixes = tuple((config or {}).get("EXCLUDE_URL_PREFIXES", None) or ())
            if value and header not in response and not path.startswith(prefixes):
                response[header] = value
        request.csp_nonce = csp.middleware.CheckableLazyObject(self._csp_nonce_post_response)
        return response
