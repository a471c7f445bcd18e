"""The annotation app's URLconf: the annotator flow and researcher pages (``study/``) and the
API (``api/``)."""

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from annotation.api import codebook_versions as codebook_versions_api
from annotation.api import report as report_api
from annotation.api import views as api
from annotation.views import (
    codebook_versions,
    flow,
    item_flow,
    prolific,
    prolific_study,
    report,
    research,
    rounds,
)

# the annotator flow, first (the hottest path): one prefix test, then its own patterns
flow_pages = [
    path("", flow.enter, name="enter"),
    path("consent/", flow.consent, name="consent"),
    path("codebook/", flow.training, name="training"),
    path("codebook/partial/", flow.codebook_partial, name="codebook_partial"),
    path("item/", item_flow.item, name="item"),
    path("a/<int:assignment_id>/submit/", item_flow.submit, name="submit"),
    path("a/<int:assignment_id>/draft/", item_flow.draft, name="draft"),
    path("a/<int:assignment_id>/submitted/", item_flow.submitted, name="submitted"),
    path("a/<int:assignment_id>/beat/", item_flow.beat, name="beat"),
    path("done/", flow.done, name="done"),
    path("screened-out/", flow.screened_out, name="screened_out"),
    path("declined/", flow.declined, name="declined"),
    path("returned/", flow.returned, name="returned"),
]

pages = [
    path("s/<slug:slug>/", include(flow_pages)),
    # researchers
    path("manage/", research.study_list, name="study_list"),
    path("codebook-versions/", codebook_versions.codebook_versions, name="codebook_versions"),
    path("manage/new/", research.study_create, name="study_create"),
    path("manage/<int:pk>/", research.progress, name="study_progress"),
    path("manage/<int:pk>/status/", research.set_status, name="study_status"),
    path("manage/<int:pk>/entry-limit/", research.set_entry_limit, name="study_entry_limit"),
    path("manage/<int:pk>/export.<str:fmt>", research.export, name="study_export"),
    path("report/<int:pk>/", report.report, name="report"),
    path("report/<int:pk>/partial/", report.report_partial, name="report_partial"),
    path("report/<int:pk>/adjudicate/", report.queue, name="queue"),
    path("report/<int:pk>/adjudicate/<int:item_id>/", report.adjudicate, name="adjudicate"),
    path("report/<int:pk>/labels.<str:fmt>", report.labels_export, name="labels_export"),
    path("report/<int:pk>/gold.<str:fmt>", report.gold_export, name="gold_export"),
    # a paid study: Prolific operations, pay, participant quality
    path("manage/<int:pk>/prolific/", prolific.prolific_page, name="prolific"),
    path(
        "manage/<int:pk>/prolific/submissions/",
        prolific.submissions_action,
        name="prolific_submissions",
    ),
    path("manage/<int:pk>/prolific/bonuses/", prolific.bonuses, name="prolific_bonuses"),
    path("manage/<int:pk>/prolific/exclude/", prolific.exclude, name="prolific_exclude"),
    path("manage/<int:pk>/pay/", prolific.pay_page, name="pay"),
    path("manage/<int:pk>/quality/", prolific.quality_page, name="quality"),
    path("manage/<int:pk>/quality.<str:fmt>", prolific.quality_export, name="quality_export"),
    path("manage/<int:pk>/rounds/", rounds.rounds_page, name="rounds"),
    # the study's life on Prolific (create, pilot, publish, follow) and webhooks
    path("manage/<int:pk>/prolific/study/", prolific_study.study_page, name="prolific_study"),
    path("manage/<int:pk>/prolific/create/", prolific_study.create, name="prolific_create"),
    path("manage/<int:pk>/prolific/publish/", prolific_study.publish, name="prolific_publish"),
    path(
        "manage/<int:pk>/prolific/control/", prolific_study.transition, name="prolific_transition"
    ),
    path("manage/<int:pk>/prolific/places/", prolific_study.places, name="prolific_places"),
    path("manage/<int:pk>/prolific/pilot/", prolific_study.pilot, name="prolific_pilot"),
    path("manage/<int:pk>/prolific/sync/", prolific_study.sync, name="prolific_sync"),
    path("prolific/hooks/", prolific_study.hooks_page, name="prolific_hooks"),
    path("prolific/hook/", prolific_study.hook_receive, name="prolific_hook"),
]

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("studies", api.StudyViewSet, basename="study")
router.register(
    "codebook-versions", codebook_versions_api.CodebookVersionViewSet, basename="codebook-version"
)

api_patterns = [
    path("studies/<int:pk>/report/", report_api.StudyReportView.as_view(), name="report"),
    path(
        "studies/<int:pk>/adjudication-queue/",
        report_api.AdjudicationQueueView.as_view(),
        name="adjudication_queue",
    ),
    path(
        "study-items/<int:item_id>/adjudication/",
        report_api.ItemAdjudicationView.as_view(),
        name="item_adjudication",
    ),
    path("studies/<int:pk>/labels/", report_api.StudyLabelsView.as_view(), name="labels"),
    path("studies/<int:pk>/gold/", report_api.StudyGoldView.as_view(), name="gold"),
    path("", include(router.urls)),
]

urlpatterns = [
    path("study/", include((pages, "annotation"))),
    path("api/", include((api_patterns, "annotation_api"))),
]
