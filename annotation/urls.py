from django.urls import path

from annotation import views_flow as flow
from annotation import views_research as research

app_name = "annotation"
urlpatterns = [
    # researchers
    path("manage/", research.study_list, name="study_list"),
    path("manage/new/", research.study_create, name="study_create"),
    path("manage/<int:pk>/", research.progress, name="study_progress"),
    path("manage/<int:pk>/status/", research.set_status, name="study_status"),
    path("manage/<int:pk>/export.<str:fmt>", research.export, name="study_export"),
    # annotators
    path("s/<slug:slug>/", flow.enter, name="enter"),
    path("s/<slug:slug>/consent/", flow.consent, name="consent"),
    path("s/<slug:slug>/codebook/", flow.training, name="training"),
    path("s/<slug:slug>/codebook/partial/", flow.codebook_partial, name="codebook_partial"),
    path("s/<slug:slug>/item/", flow.item, name="item"),
    path("s/<slug:slug>/a/<int:assignment_id>/submit/", flow.submit, name="submit"),
    path("s/<slug:slug>/a/<int:assignment_id>/draft/", flow.draft, name="draft"),
    path("s/<slug:slug>/a/<int:assignment_id>/beat/", flow.beat, name="beat"),
    path("s/<slug:slug>/done/", flow.done, name="done"),
    path("s/<slug:slug>/screened-out/", flow.screened_out, name="screened_out"),
    path("s/<slug:slug>/declined/", flow.declined, name="declined"),
]
