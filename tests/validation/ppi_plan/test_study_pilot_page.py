"""The plan page of a running study: its labels and an app judge's verdicts are the pilot; the
same plan as ``manage.py ppi_plan --pilot-study``, in words; the study it asks for is made from
that judge's generations (admins); a study the judge never scored, or not of critical failures,
says why."""

from __future__ import annotations

import html
import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.services.study import study_create
from judging.models import Judge
from tests.annotation.factories import make_annotation, make_generations, regular_items
from tests.judging.factories import judged_run, make_judge

pytestmark = pytest.mark.django_db

QUERY = {"judge": "pilot-judge", "cost_human": "0.90", "cost_judge": "0.02", "target": "budget",
         "value": "300", "currency": "GBP"}  # fmt: skip


@pytest.fixture
def pilot():
    gens = make_generations(30)
    verdicts = [i % 3 == 0 for i in range(30)]
    judged_run(make_judge(name="pilot-judge"), gens, verdicts)
    study = study_create(name="running", generation_ids=[g.pk for g in gens[:12]])
    for i, item in enumerate(regular_items(study)):
        make_annotation(item=item, annotator="P1", has_failure=verdicts[i] != (i in (4, 7)))
    return study


def _text(response) -> str:
    return html.unescape(response.content.decode())


def test_the_study_is_the_pilot_and_the_plan_equals_the_command(client, make_user, pilot):
    client.force_login(make_user("res", role="researcher"))
    url = f"/judging/compare/study/{pilot.pk}/plan/"
    assert f'href="{url}"' in _text(client.get(f"/judging/compare/study/{pilot.pk}/"))
    page = client.get(url, QUERY)
    assert page.status_code == 200
    out = StringIO()
    call_command("ppi_plan", "--pilot-study", str(pilot.pk), "--judge", "pilot-judge",
                 "--cost-human", "0.90", "--cost-judge", "0.02", "--budget", "300",
                 "--format", "json", stdout=out)  # fmt: skip
    want = json.loads(out.getvalue())
    text = _text(page)
    assert f"Label {want['n']:,} items by people" in text
    assert "Plan a study from running" in text and "--pilot-study" in text
    assert 'id="create-study-form"' not in text and "for admins" in text  # researchers read


def test_an_admin_creates_the_study_from_the_judges_generations(client, make_user, pilot):
    client.force_login(make_user("adm", role="admin"))
    url = f"/judging/compare/study/{pilot.pk}/plan/"
    query = "&".join(f"{k}={v}" for k, v in QUERY.items())
    form = client.get(url, QUERY)
    assert "Create the study" in _text(form)
    response = client.post(
        f"{url}?{query}",
        {"study-name": "next", "study-judge": Judge.objects.get(name="pilot-judge").pk,
         "study-n": "10", "study-overlap": "1", "study-items_per_participant": "5",
         "study-currency": "GBP", "study-reward": "1.00", "study-sampling": "uniform",
         "study-seed": "3"},
    )  # fmt: skip
    assert response.status_code == 302, _text(response)[:2000]
    made = Study.objects.get(name="next")
    assert made.items.filter(kind="regular").count() == 10
    assert made.design["label_set"] is None and len(made.design["population"]) == 30


def test_a_study_no_judge_scored_and_one_of_another_form_say_why(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    gens = make_generations(3)
    unscored = study_create(name="unscored", generation_ids=[g.pk for g in gens])
    page = client.get(f"/judging/compare/study/{unscored.pk}/plan/")
    assert "No judge has scored this study's items yet" in _text(page)
    judged_run(make_judge(name="rating-judge"), gens, [True, False, True])
    rating = study_create(
        name="ratings", generation_ids=[g.pk for g in gens], form_type="rating",
        form_config={"points": 3, "low": 0, "dimensions": [{"key": "overall", "label": "All"}]},
    )  # fmt: skip
    refused = client.get(
        f"/judging/compare/study/{rating.pk}/plan/", {**QUERY, "judge": "rating-judge"}
    )
    assert refused.status_code == 400 and "is a rating study" in _text(refused)
    assert client.get("/judging/compare/study/999999/plan/").status_code == 404
