from django.urls import path

app_name = "judging"
urlpatterns: list = []
