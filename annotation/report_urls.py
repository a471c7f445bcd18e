"""Study report, adjudication and label exports (included at ``study/report/``)."""

from django.urls import path

from annotation import report_views as views

app_name = "annotation_report"
urlpatterns = [
    path("<int:pk>/", views.report, name="report"),
    path("<int:pk>/partial/", views.report_partial, name="report_partial"),
    path("<int:pk>/adjudicate/", views.queue, name="queue"),
    path("<int:pk>/adjudicate/<int:item_id>/", views.adjudicate, name="adjudicate"),
    path("<int:pk>/labels.<str:fmt>", views.labels_export, name="labels_export"),
    path("<int:pk>/gold.<str:fmt>", views.gold_export, name="gold_export"),
]
