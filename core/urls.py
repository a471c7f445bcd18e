"""Project-wide pages: home, health check, sign-in, and the API schema and docs."""

from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from core import views


def _api_docs_view(name: str):
    """The view ``name`` of ``core.api_docs``, imported on the first request (that module
    pulls in drf-spectacular's schema machinery, which no other page needs)."""

    @csrf_exempt  # as DRF's views are; the schema and docs pages are read-only GETs
    def view(request, *args, **kwargs):
        from core import api_docs

        return getattr(api_docs, name)(request, *args, **kwargs)

    view.__name__ = view.__qualname__ = f"api_{name}"
    return view


urlpatterns = [
    path("", views.home, name="home"),
    # browsers ask for /favicon.ico on every page without a <link rel=icon> (the console's)
    path("favicon.ico", views.favicon, name="favicon"),
    path("healthz", views.healthz, name="healthz"),
    path("healthz/ready", views.healthz_ready, name="healthz-ready"),
    path("healthz/workers", views.healthz_workers, name="healthz-workers"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", _api_docs_view("schema"), name="schema"),
    path("api/docs/", _api_docs_view("docs"), name="api-docs"),
]
