"""Project-wide pages: home, health check, sign-in, and the API schema and docs."""

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core import views

urlpatterns = [
    path("", views.home, name="home"),
    # browsers ask for /favicon.ico on every page without a <link rel=icon> (the console's)
    path("favicon.ico", views.favicon, name="favicon"),
    path("healthz", views.healthz, name="healthz"),
    path("healthz/ready", views.healthz_ready, name="healthz-ready"),
    path("healthz/workers", views.healthz_workers, name="healthz-workers"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # a visitor is offered the sign-in page (then comes back), not a bare 403
    path(
        "api/docs/",
        login_required(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="api-docs",
    ),
]
