from django.urls import path

app_name = "annotation"
urlpatterns: list = []
