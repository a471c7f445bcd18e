"""The demo shows two judge prompt versions side by side: the shipped H.3 text (version 1) and
a version 2 marked as demo data, two judges of one family with SIMULATED verdicts on the
finished study; loading again adds nothing."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Study
from demo.prompt_versions import JUDGE_V1, JUDGE_V2
from demo.studies import SIMULATED_STUDY
from judging.models import Judge, Judgment, PromptVersion
from validation.prompt_versions.reads import prompt_version_comparison

pytestmark = pytest.mark.django_db


def test_demo_has_two_prompt_versions_to_compare(settings, tmp_path, client, make_user):
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"  # the demo mining batch's upload
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "prompt versions (DEMO DATA" in out.getvalue()
    v1, v2 = PromptVersion.objects.filter(name="judge_h3").order_by("number")
    assert (v1.number, v1.is_demo) == (1, False)
    assert (v2.number, v2.is_demo) == (2, True) and v2.note.startswith("DEMO DATA")
    study = Study.objects.get(name=SIMULATED_STUDY)
    judge = Judge.objects.get(name=JUDGE_V1)
    report = prompt_version_comparison(study=study, judge=judge, n_resamples=100)
    assert [v["label"] for v in report["versions"]] == ["judge_h3 v1", "judge_h3 v2"]
    n_items = study.items.filter(kind="regular").count()
    assert all(v["n_judged"] == n_items for v in report["versions"])
    assert report["versions"][1]["mcnemar"]["n"] >= 1
    assert (
        Judgment.objects.filter(judge__name=JUDGE_V2, reasoning__contains="SIMULATED").count()
        == n_items
    )

    call_command("load_demo", stdout=io.StringIO())  # again: nothing doubled
    assert PromptVersion.objects.filter(name="judge_h3").count() == 2
    assert Judgment.objects.filter(judge__name=JUDGE_V2).count() == n_items

    client.force_login(make_user("demo-reader", role="researcher"))
    html = client.get(
        reverse("validation:prompt_versions"), {"study": study.pk, "judge": JUDGE_V1}
    ).content.decode()
    assert "judge_h3 v2" in html and "DEMO DATA" in html
