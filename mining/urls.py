"""The mining app's URLconf: batch pages (``mining/``) and their API (``api/mining/``)."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from mining.api.views import MiningBatchViewSet
from mining.views import batches

pages = [
    path("", batches.batch_list, name="batch_list"),
    path("new/", batches.batch_new, name="batch_new"),
    path("batches/<int:pk>/", batches.batch_detail, name="batch_detail"),
    path("batches/<int:pk>/live/", batches.batch_progress, name="batch_progress"),
    path("batches/<int:pk>/cancel/", batches.batch_cancel, name="batch_cancel"),
    path("batches/<int:pk>/resume/", batches.batch_resume, name="batch_resume"),
    path("batches/<int:pk>/promote/", batches.batch_promote, name="batch_promote"),
    path("batches/<int:pk>/promotion/", batches.batch_promotion, name="batch_promotion"),
    path("batches/<int:pk>/documents/", batches.batch_documents, name="batch_documents"),
    path("batches/<int:pk>/export.jsonl", batches.batch_export, name="batch_export"),
]

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("mining/batches", MiningBatchViewSet, basename="batch")

urlpatterns = [
    path("mining/", include((pages, "mining"))),
    path("api/", include((router.urls, "mining_api"))),
]
