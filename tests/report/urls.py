"""The project's URLs plus the report's, until the lead includes them in config/urls.py."""

from django.urls import include, path

from config.urls import urlpatterns as project_urlpatterns

urlpatterns = [
    path("study/report/", include("annotation.report_urls")),
    path("api/", include("annotation.api_report_urls")),
    *project_urlpatterns,
]
