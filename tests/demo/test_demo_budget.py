"""The demo spends a human budget where it counts, on SIMULATED data (demo.budget): a plan from
the uploaded label set, the study made from it where the judge is unsure, stopped by its
target, with its report and its escalation threshold, each in words."""

import html
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import Study, StudyItem
from demo.budget import JUDGE, PLAN_TARGET, PLANNED_STUDY, plan_path
from demo.label_sets import NAME
from validation.active.reads import study_interval
from validation.models import LabelSet

pytestmark = pytest.mark.django_db


def _text(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return html.unescape(response.content.decode())


def test_demo_plan_active_study_and_escalation(settings, tmp_path, client):
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    study = Study.objects.get(name=PLANNED_STUDY)
    label_set = LabelSet.objects.get(name=NAME)
    assert plan_path(label_set) in out.getvalue()
    # drawn where the judge is unsure: every item carries its probability, the unsure likelier
    probabilities = list(
        StudyItem.objects.filter(study=study, kind="regular").values_list(
            "inclusion_probability", flat=True
        )
    )
    assert probabilities and all(p is not None and 0 < p <= 1 for p in probabilities)
    assert study.design["sampling"] == "uncertainty" and study.design["label_set"] == label_set.pk
    # stopped by its target: paused, the moment and the interval kept, the rule held
    assert study.status == Study.Status.PAUSED and study.target_reached_at is not None
    now = study_interval(study)
    assert now["reached"] and now["half_width"] <= PLAN_TARGET and now["n_labels"] >= 100
    call_command("load_demo", stdout=io.StringIO())
    assert Study.objects.filter(name=PLANNED_STUDY).count() == 1

    client.force_login(get_user_model().objects.get(username="researcher"))
    plan = _text(client, plan_path(label_set))
    assert "Label " in plan and "people alone" in plan
    report = _text(client, f"/study/report/{study.pk}/")
    assert "active inference" in report.lower() or "where the judge is unsure" in report
    escalation = _text(
        client, f"/judging/compare/validation/escalation/?study={study.pk}&judge={JUDGE}"
    )
    assert f"{JUDGE} can decide the items where its confidence is at least" in escalation
    for page in (plan, report, escalation):
        for word in ("None", "NaN", "undefined"):
            assert f">{word}<" not in page
