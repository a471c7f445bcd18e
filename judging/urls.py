"""The judging app's URLconf: the judge leaderboard (``judging/compare/leaderboard/``, beside the
comparison pages of :mod:`validation.urls`), the analyses (``judging/analyses/``), the scorer
packs' results pages (``packs/``) and the API (``api/``).
Judges and judge runs are launched from the console (``admin/judging/``)."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from judging.analyses import api as analyses_api
from judging.analyses import views as analyses
from judging.api import prompt_versions as prompt_versions_api
from judging.api import reward as reward_api
from judging.api import views as api
from judging.leaderboard import api as leaderboard_api
from judging.leaderboard import views as leaderboard_views
from judging.pack_results import api as pack_results_api
from judging.pack_results import views as pack_results_views
from judging.scores import api as scores_api

pages = [
    path("leaderboard/", leaderboard_views.leaderboard, name="leaderboard"),
]

analyses_pages = [
    path("", analyses.index, name="index"),
    path("difficulty/", analyses.difficulty, name="difficulty"),
    path("breakdowns/", analyses.breakdowns, name="breakdowns"),
    path("checkpoints/", analyses.checkpoints, name="checkpoints"),
    path("orderings/", analyses.orderings, name="orderings"),
]

pack_results_pages = [
    path("", pack_results_views.index, name="index"),
    path("<str:pack>/results/", pack_results_views.results, name="results"),
    path("<str:pack>/results/export.<str:fmt>", pack_results_views.export, name="export"),
]

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("judges", api.JudgeViewSet, basename="judge")
router.register("judge-runs", api.JudgeRunViewSet, basename="judge-run")
router.register("judgments", api.JudgmentViewSet, basename="judgment")
router.register(
    "prompt-versions", prompt_versions_api.PromptVersionViewSet, basename="prompt-version"
)

api_patterns = [
    path("compare/leaderboard/", leaderboard_api.LeaderboardView.as_view(), name="leaderboard"),
    path("how2score/", scores_api.How2ScoreView.as_view(), name="how2score"),
    path(
        "packs/<str:pack>/results/",
        pack_results_api.PackResultsView.as_view(),
        name="pack_results",
    ),
    path("reward/", reward_api.reward, name="reward"),
    path("analyses/<str:kind>/", analyses_api.AnalysisView.as_view(), name="analyses"),
    path("", include(router.urls)),
]

urlpatterns = [
    path("judging/compare/", include((pages, "judging"))),
    path("judging/analyses/", include((analyses_pages, "judging_analyses"))),
    path("packs/", include((pack_results_pages, "pack_results"))),
    path("api/", include((api_patterns, "judging_api"))),
]
