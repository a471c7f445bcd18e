"""Researcher pages for judge comparisons (included by the project at ``judging/compare/``)."""
from django.urls import path

from judging import views_compare as views

app_name = "judging_compare"
urlpatterns = [
    path("", views.index, name="index"),
    path("study/<int:pk>/", views.study, name="study"),
    path("judges/", views.judges, name="judges"),
    path("rankings/", views.rankings, name="rankings"),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
]
