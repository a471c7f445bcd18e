"""The validation app's URLconf: the pages that measure judges against people and each other
(under ``judging/compare/``, their paths unchanged; the leaderboard beside them is judging's)
and their API (``api/``). The root URLconf includes it before judging's, so
``api/prompt-versions/compare/`` is found before the prompt-version router's detail route."""

from django.urls import include, path

from validation.alt_test import api as alt_test_api
from validation.alt_test import views as alt_test_views
from validation.comparisons import api as comparisons_api
from validation.comparisons import views as comparisons
from validation.disagreements import api as disagreements_api
from validation.disagreements import views as disagreements_views
from validation.escalation import api as escalation_api
from validation.escalation import views as escalation_views
from validation.judge_validation import api as judge_validation_api
from validation.judge_validation import views as judge_validation_views
from validation.label_sets import views as label_sets_views
from validation.metric_validation import api as metric_validation_api
from validation.metric_validation import views as metric_validation_views
from validation.ppi import api as ppi_api
from validation.ppi import views as ppi_views
from validation.ppi_plan import views as ppi_plan_views
from validation.probes import api as probes_api
from validation.prompt_versions import api as prompt_versions_api
from validation.prompt_versions import views as prompt_versions_views
from validation.stopping import views as stopping_views

pages = [
    path("", comparisons.index, name="index"),
    path("study/<int:pk>/", comparisons.study, name="study"),
    path("study/<int:pk>/plan/", ppi_plan_views.study_plan_page, name="study_plan"),
    path("study/<int:pk>/target/", stopping_views.study_target, name="study_target"),
    path(
        "study/<int:pk>/target/resume/",
        stopping_views.study_target_resume,
        name="study_target_resume",
    ),
    path("judges/", comparisons.judges, name="judges"),
    path("rankings/", comparisons.rankings, name="rankings"),
    path("validation/", judge_validation_views.validation, name="validation"),
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
    path("validation/escalation/", escalation_views.escalation, name="escalation"),
    path(
        "validation/escalation/apply/",
        escalation_views.escalation_apply,
        name="escalation_apply",
    ),
    path("rankings/ppi/", ppi_views.rankings_ppi, name="rankings_ppi"),
    path(
        "rankings/ppi/export.<str:fmt>", ppi_views.rankings_ppi_export, name="rankings_ppi_export"
    ),
    path("disagreements/", disagreements_views.disagreements, name="disagreements"),
    path("metric-validation/", metric_validation_views.metric_validation, name="metric_validation"),
    path("label-sets/", label_sets_views.label_sets, name="label_sets"),
    path("label-sets/<int:pk>/", label_sets_views.label_set, name="label_set"),
    path("label-sets/<int:pk>/plan/", ppi_plan_views.label_set_plan_page, name="label_set_plan"),
    path("label-sets/<int:pk>/delete/", label_sets_views.label_set_remove, name="label_set_delete"),
]

api_patterns = [
    path("compare/studies/<int:pk>/", comparisons_api.StudyComparisonView.as_view(), name="study"),
    path("compare/judges/", comparisons_api.JudgePairsView.as_view(), name="judges"),
    path("compare/rankings/", comparisons_api.RankingsView.as_view(), name="rankings"),
    path("validation/", judge_validation_api.JudgeValidationView.as_view(), name="validation"),
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
    path("how2score/ppi/", ppi_api.How2ScorePPIView.as_view(), name="how2score_ppi"),
    path("validation/probes/", probes_api.JudgeProbesView.as_view(), name="validation_probes"),
    path(
        "validation/escalation/",
        escalation_api.EscalationView.as_view(),
        name="validation_escalation",
    ),
    path("disagreements/", disagreements_api.DisagreementsView.as_view(), name="disagreements"),
    path(
        "metric-validation/",
        metric_validation_api.MetricValidationView.as_view(),
        name="metric_validation",
    ),
]

urlpatterns = [
    path("judging/compare/", include((pages, "validation"))),
    path("api/", include((api_patterns, "validation_api"))),
]
