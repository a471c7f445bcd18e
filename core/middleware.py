"""Request-size limits answered before any view reads the body: a request larger than its limit
(core.limits) gets a 413 naming the limit — an HTML page, or JSON on /api/."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from core.limits import human_bytes, upload_max_bytes


def _limit_for(request: HttpRequest) -> tuple[int, str]:
    if request.content_type == "multipart/form-data" or request.META.get(
        "CONTENT_TYPE", ""
    ).startswith("multipart/"):
        return upload_max_bytes(), "UPLOAD_MAX_BYTES"
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0), "DATA_UPLOAD_MAX_BYTES"


def too_large(request: HttpRequest, limit: int, setting: str) -> HttpResponse:
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
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, RequestDataTooBig):  # a body without Content-Length
            limit, setting = _limit_for(request)
            return too_large(request, limit, setting)
        return None
