from django.urls import path

from benchmarks.mining import views

app_name = "mining"
urlpatterns = [
    path("", views.batch_list, name="batch_list"),
    path("new/", views.batch_new, name="batch_new"),
    path("batches/<int:pk>/", views.batch_detail, name="batch_detail"),
    path("batches/<int:pk>/live/", views.batch_progress, name="batch_progress"),
    path("batches/<int:pk>/cancel/", views.batch_cancel, name="batch_cancel"),
    path("batches/<int:pk>/resume/", views.batch_resume, name="batch_resume"),
    path("batches/<int:pk>/promote/", views.batch_promote, name="batch_promote"),
    path("batches/<int:pk>/documents/", views.batch_documents, name="batch_documents"),
    path("batches/<int:pk>/export.jsonl", views.batch_export, name="batch_export"),
]
