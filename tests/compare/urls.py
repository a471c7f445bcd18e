"""The project's URLs plus the comparison pages and API, until the project includes them."""
from django.urls import include, path

from config.urls import urlpatterns as project

urlpatterns = [
    *project,
    path("judging/compare/", include("judging.urls_compare")),
    path("api/", include("judging.api_compare_urls")),
]
