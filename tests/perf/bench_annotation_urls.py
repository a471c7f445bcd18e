"""URLs of the bench_annotation.py server: the site's, plus ``/bench/floor/``, a bare view (no
query, no template) under the full middleware stack: the per-request floor of Django + gunicorn."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import urlpatterns as site_urlpatterns


def floor(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [path("bench/floor/", floor), *site_urlpatterns]
