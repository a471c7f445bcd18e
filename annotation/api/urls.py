from django.urls import include, path
from rest_framework.routers import DefaultRouter

from annotation.api import views

app_name = "annotation_api"

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("studies", views.StudyViewSet, basename="study")

urlpatterns = [path("", include(router.urls))]
