"""Report API routes (included at ``api/``)."""

from django.urls import path

from annotation import api_report as views

app_name = "annotation_report_api"
urlpatterns = [
    path("studies/<int:pk>/report/", views.StudyReportView.as_view(), name="report"),
    path(
        "studies/<int:pk>/adjudication-queue/",
        views.AdjudicationQueueView.as_view(),
        name="adjudication_queue",
    ),
    path(
        "study-items/<int:item_id>/adjudication/",
        views.ItemAdjudicationView.as_view(),
        name="item_adjudication",
    ),
    path("studies/<int:pk>/labels/", views.StudyLabelsView.as_view(), name="labels"),
    path("studies/<int:pk>/gold/", views.StudyGoldView.as_view(), name="gold"),
]
