from django.urls import path

from benchmarks import views

app_name = "benchmarks"
urlpatterns = [
    path("", views.dataset_list, name="dataset_list"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("procedures/<int:pk>/", views.procedure_detail, name="procedure_detail"),
]
