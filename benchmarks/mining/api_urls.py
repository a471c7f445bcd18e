from django.urls import include, path
from rest_framework.routers import DefaultRouter

from benchmarks.mining.api import MiningBatchViewSet

app_name = "mining_api"

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("mining/batches", MiningBatchViewSet, basename="batch")

urlpatterns = [path("", include(router.urls))]
