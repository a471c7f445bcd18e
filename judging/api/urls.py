from django.urls import include, path
from rest_framework.routers import DefaultRouter

from judging.api import views

app_name = "judging_api"

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("judges", views.JudgeViewSet, basename="judge")
router.register("judge-runs", views.JudgeRunViewSet, basename="judge-run")
router.register("judgments", views.JudgmentViewSet, basename="judgment")

urlpatterns = [
    path("", include(router.urls)),
]
