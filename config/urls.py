"""Root URLconf: the admin site and each app's one URLconf, nothing else."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("core.urls")),
    path("", include("benchmarks.urls")),
    path("", include("mining.urls")),
    path("", include("annotation.urls")),
    path("", include("judging.urls")),
]
