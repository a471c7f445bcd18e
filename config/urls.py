from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from benchmarks import views as benchmark_views

urlpatterns = [
    path("", benchmark_views.home, name="home"),
    path("healthz", benchmark_views.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("data/", include("benchmarks.urls")),
    path("study/report/", include("annotation.report_urls")),
    path("study/", include("annotation.urls")),
    path("judging/compare/", include("judging.urls_compare")),
    path("judging/", include("judging.urls")),
    path("mining/", include("benchmarks.mining.urls")),
    path("api/", include("benchmarks.api.urls")),
    path("api/", include("annotation.api.urls")),
    path("api/", include("annotation.api_report_urls")),
    path("api/", include("judging.api.urls")),
    path("api/", include("judging.api_compare_urls")),
    path("api/", include("benchmarks.mining.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]
