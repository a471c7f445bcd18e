"""The judging app's URLconf: comparison pages (``judging/compare/``), the scorer packs' results
pages (``packs/``) and the API (``api/``).
Judges and judge runs are launched from the console (``admin/judging/``)."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from judging.api import alt_test as alt_test_api
from judging.api import analyses as analyses_api
from judging.api import compare as compare_api
from judging.api import disagreements as disagreements_api
from judging.api import metric_validation as metric_validation_api
from judging.api import pack_results as pack_results_api
from judging.api import probes as probes_api
from judging.api import prompt_versions as prompt_versions_api
from judging.api import reward as reward_api
from judging.api import scores as scores_api
from judging.api import validation as validation_api
from judging.api import views as api
from judging.views import alt_test as alt_test_views
from judging.views import analyses, compare
from judging.views import disagreements as disagreements_views
from judging.views import metric_validation as metric_validation_views
from judging.views import pack_results as pack_results_views
from judging.views import prompt_versions as prompt_versions_views
from judging.views import validation as validation_views

pages = [
    path("", compare.index, name="index"),
    path("study/<int:pk>/", compare.study, name="study"),
    path("judges/", compare.judges, name="judges"),
    path("rankings/", compare.rankings, name="rankings"),
    path("leaderboard/", compare.leaderboard, name="leaderboard"),
    path("validation/", validation_views.validation, name="validation"),
    path(
        "validation/prompt-versions/",
        prompt_versions_views.prompt_versions,
        name="prompt_versions",
    ),
    path("validation/alt-test/", alt_test_views.validation_alt_test, name="validation_alt_test"),
    path("validation/alt-test/plan/", alt_test_views.alt_test_plan, name="alt_test_plan"),
    path(
        "validation/alt-test/export.<str:fmt>",
        alt_test_views.validation_alt_test_export,
        name="validation_alt_test_export",
    ),
    path("rankings/ppi/", alt_test_views.rankings_ppi, name="rankings_ppi"),
    path(
        "rankings/ppi/export.<str:fmt>",
        alt_test_views.rankings_ppi_export,
        name="rankings_ppi_export",
    ),
    path("disagreements/", disagreements_views.disagreements, name="disagreements"),
    path("metric-validation/", metric_validation_views.metric_validation, name="metric_validation"),
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
    path("compare/studies/<int:pk>/", compare_api.StudyComparisonView.as_view(), name="study"),
    path("compare/judges/", compare_api.JudgePairsView.as_view(), name="judges"),
    path("compare/rankings/", compare_api.RankingsView.as_view(), name="rankings"),
    path("compare/leaderboard/", compare_api.LeaderboardView.as_view(), name="leaderboard"),
    path("validation/", validation_api.JudgeValidationView.as_view(), name="validation"),
    path(
        "prompt-versions/compare/",
        prompt_versions_api.PromptVersionComparisonView.as_view(),
        name="prompt_version_comparison",
    ),
    path(
        "validation/alt-test/",
        alt_test_api.ValidationAltTestView.as_view(),
        name="validation_alt_test",
    ),
    path("validation/alt-test/plan/", alt_test_api.AltTestPlanView.as_view(), name="alt_test_plan"),
    path("how2score/ppi/", alt_test_api.How2ScorePPIView.as_view(), name="how2score_ppi"),
    path("validation/probes/", probes_api.JudgeProbesView.as_view(), name="validation_probes"),
    path("disagreements/", disagreements_api.DisagreementsView.as_view(), name="disagreements"),
    path(
        "metric-validation/",
        metric_validation_api.MetricValidationView.as_view(),
        name="metric_validation",
    ),
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
