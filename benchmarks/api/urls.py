from django.urls import include, path
from rest_framework.routers import DefaultRouter

from benchmarks.api import views

app_name = "benchmarks_api"

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("datasets", views.DatasetViewSet, basename="dataset")
router.register("topics", views.TopicViewSet, basename="topic")
router.register("procedures", views.ProcedureViewSet, basename="procedure")
router.register("generators", views.GeneratorViewSet, basename="generator")
router.register("generations", views.GenerationViewSet, basename="generation")

urlpatterns = [
    path("auth/token/", views.ResearcherAuthToken.as_view(), name="api-token"),
    path("", include(router.urls)),
]
