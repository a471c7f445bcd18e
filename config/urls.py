"""Root URLconf: the admin site and each app's one URLconf, nothing else. Django tries patterns
in order: the annotation app comes first, its participant flow being the hottest path (a test,
tests/core/test_url_order.py, checks that no pattern shadows another)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("annotation.urls")),
    path("admin/", admin.site.urls),
    path("", include("core.urls")),
    path("", include("benchmarks.urls")),
    path("", include("mining.urls")),
    path("", include("validation.urls")),  # before judging: see validation/urls.py
    path("", include("judging.urls")),
]
