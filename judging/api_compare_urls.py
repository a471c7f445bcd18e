"""Comparison API (included by the project at ``api/``)."""
from django.urls import path

from judging import api_compare as views

app_name = "judging_compare_api"
urlpatterns = [
    path("compare/studies/<int:pk>/", views.StudyComparisonView.as_view(), name="study"),
    path("compare/judges/", views.JudgePairsView.as_view(), name="judges"),
    path("compare/rankings/", views.RankingsView.as_view(), name="rankings"),
    path("compare/leaderboard/", views.LeaderboardView.as_view(), name="leaderboard"),
]
