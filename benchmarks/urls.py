"""The benchmarks app's URLconf: the dataset browser (``data/``) and its API (``api/``)."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from benchmarks.api import views as api
from benchmarks.api.generation_runs import GenerationRunViewSet
from benchmarks.views import datasets, outputs

pages = [
    path("", datasets.dataset_list, name="dataset_list"),
    path("datasets/<int:pk>/", datasets.dataset_detail, name="dataset_detail"),
    path("procedures/<int:pk>/", datasets.procedure_detail, name="procedure_detail"),
    path("generations/<int:pk>/output/", outputs.generation_output, name="generation_output"),
    path(
        "generations/<int:pk>/step-diff/",
        outputs.generation_step_diff,
        name="generation_step_diff",
    ),
]

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("datasets", api.DatasetViewSet, basename="dataset")
router.register("topics", api.TopicViewSet, basename="topic")
router.register("procedures", api.ProcedureViewSet, basename="procedure")
router.register("generators", api.GeneratorViewSet, basename="generator")
router.register("generations", api.GenerationViewSet, basename="generation")
router.register("generation-runs", GenerationRunViewSet, basename="generation-run")

api_patterns = [
    path("auth/token/", api.ResearcherAuthToken.as_view(), name="api-token"),
    path("", include(router.urls)),
]

urlpatterns = [
    path("data/", include((pages, "benchmarks"))),
    path("api/", include((api_patterns, "benchmarks_api"))),
]
