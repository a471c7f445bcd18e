"""The demo shows an alt-test result and a PPI-corrected ranking, on SIMULATED data marked as
such (demo.replace)."""

import io

import pytest
from django.core.management import call_command

from annotation.models import Study
from demo.budget import JUDGE as BUDGET_JUDGE
from demo.budget import PLANNED_STUDY
from demo.replace import DATASET, JUDGE, STUDY
from judging.models import Judge
from validation.alt_test.reads import study_alt_test
from validation.ppi.reads import ppi_rankings

pytestmark = pytest.mark.django_db


def test_demo_alt_test_and_ppi_ranking(settings, tmp_path, client, make_user):
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "SIMULATED study" in out.getvalue()
    study = Study.objects.get(name=STUDY)
    judge = Judge.objects.get(name=JUDGE)
    assert "SIMULATED" in study.description
    # the paper's simulated study stays the home page's headline study
    from annotation.selectors.dashboard import latest_labelled_study
    from demo.studies import SIMULATED_STUDY

    assert latest_labelled_study().name == SIMULATED_STUDY
    (section,) = study_alt_test(study=study, judge=judge)["sections"]
    assert section["winning_rate"] is not None  # every annotator labelled 36 items ≥ 30
    assert [a["n_items"] for a in section["annotators"]] == [36, 36, 36]
    report = ppi_rankings(study=study, judge=judge)
    rows = report["generators"]
    assert [r["generator"] for r in rows] and all(r["how2score"] is not None for r in rows)
    assert {(r["n_labelled"], r["n_unlabelled"]) for r in rows} == {(12, 28)}
    # the labels move the judge's scores (the simulated judge misses failures)
    assert any(abs(r["judge_only_how2score"] - r["how2score"]) > 0.01 for r in rows)
    assert all(r["ci"][0] < r["how2score"] < r["ci"][1] for r in rows)
    client.force_login(make_user("demo-reader", role="researcher"))
    html = client.get(
        "/judging/compare/validation/alt-test/", {"study": study.pk, "judge": JUDGE}
    ).content.decode()
    assert "winning rate ω" in html and "simulated-1" in html
    ranking = client.get(
        "/judging/compare/rankings/ppi/", {"study": study.pk, "judge": JUDGE}
    ).content.decode()
    assert f"corrected with the labels of study {STUDY}" in ranking and "sim-gen-a" in ranking
    # the rankings page's PPI section opens on the judge that scored most and its study: the
    # budget demo's judge (500 verdicts against 120) and the study made from its plan
    default = client.get("/judging/compare/rankings/ppi/").content.decode()
    assert f"{BUDGET_JUDGE}, corrected with the labels of study {PLANNED_STUDY}" in default
    assert DATASET == "how2bench-demo-simulated"
    # loading again keeps everything
    call_command("load_demo", stdout=io.StringIO())
    assert Study.objects.filter(name=STUDY).count() == 1
