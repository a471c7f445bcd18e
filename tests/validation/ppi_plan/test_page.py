"""The plan page of a label set: the same plan as the command on the same file, in a sentence
with the people-only comparison; refusals at their field with the text kept; researchers read,
annotators see nothing."""

from __future__ import annotations

import html
import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from tests.validation.label_sets.scenario import csv_text, rows
from validation.models import LabelSet

pytestmark = pytest.mark.django_db


@pytest.fixture
def label_set(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    response = client.post(
        "/judging/compare/label-sets/",
        {"name": "pilot", "file": SimpleUploadedFile("labels.csv", csv_text(rows()).encode()),
         "annotator_kind": "crowd", "critical_failures": "on"},
    )  # fmt: skip
    assert response.status_code == 302
    return LabelSet.objects.get(name="pilot")


def _url(label_set) -> str:
    return f"/judging/compare/label-sets/{label_set.pk}/plan/"


def _clean(response) -> str:
    return html.unescape(response.content.decode())


def test_the_plan_equals_the_command_in_words(client, label_set, tmp_path):
    detail = _clean(client.get(f"/judging/compare/label-sets/{label_set.pk}/"))
    assert f'href="{_url(label_set)}"' in detail and "Plan a study from these labels" in detail
    empty = client.get(_url(label_set))
    assert empty.status_code == 200 and 'id="plan-sentence"' not in empty.content.decode()

    response = client.get(_url(label_set), {"judge": "my-judge", "cost_human": "0.90",
                          "cost_judge": "0.01", "target": "half_width", "value": "5",
                          "currency": "GBP"})  # fmt: skip
    assert response.status_code == 200
    page = _clean(response)
    path = tmp_path / "labels.csv"
    path.write_text(csv_text(rows()))
    out = StringIO()
    call_command("ppi_plan", "--labelled", str(path), "--cost-human", "0.90", "--cost-judge",
                 "0.01", "--half-width", "0.05", "--currency", "GBP", stdout=out)  # fmt: skip
    sentence, basis = out.getvalue().splitlines()[:2]
    assert f'id="plan-sentence"><b>{sentence}</b>' in page and basis in page
    out = StringIO()
    call_command("ppi_plan", "--labelled", str(path), "--cost-human", "0.90", "--cost-judge",
                 "0.01", "--half-width", "0.05", "--format", "json", stdout=out)  # fmt: skip
    plan = json.loads(out.getvalue())
    assert f"<td>{plan['people_only']['cost']:,.2f} GBP</td>" in page
    assert f"<td>{plan['n']:,}</td><td>{plan['people_only']['n']:,}</td>" in page
    for word in ("undefined", "None", "NaN", "null"):
        assert word not in page
    assert '<label for="id_cost_human">' in page and "<legend>Plan for</legend>" in page


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"cost_human": "abc"}, "cost_human", "Enter a number."),
        ({"cost_judge": "0"}, "cost_judge", "greater than or equal to"),
        ({"value": "80"}, "value", "±50 points or more says nothing"),
        ({"target": "effective_n", "value": "12.5"}, "value", "whole number"),
        ({"judge": "someone-else"}, "judge", "Select a valid choice"),
    ],
)
def test_refusals_at_their_field_with_the_text_kept(client, label_set, params, field, message):
    query = {"judge": "my-judge", "cost_human": "0.90", "cost_judge": "0.01",
             "target": "half_width", "value": "3", **params}  # fmt: skip
    response = client.get(_url(label_set), query)
    assert response.status_code == 400
    page = _clean(response)
    error = page.split(f'id="id_{field}-error">', 1)[1].split("</div>", 1)[0]
    assert message in error
    if field in ("cost_human", "cost_judge", "value"):
        assert f'value="{query[field]}"' in page
    assert 'id="plan-sentence"' not in page


def test_annotators_see_nothing(client, label_set, make_user):
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(_url(label_set)).status_code in (302, 403, 404)


def test_a_label_set_of_categories_says_why_there_is_no_plan(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    text = (
        "item_id,source,kind,label\na,x,human,good\nb,x,human,bad\na,j,judge,good\nb,j,judge,bad\n"
    )
    response = client.post(
        "/judging/compare/label-sets/",
        {"name": "cats", "file": SimpleUploadedFile("cats.csv", text.encode()),
         "annotator_kind": "crowd"},
    )  # fmt: skip
    assert response.status_code == 302
    label_set = LabelSet.objects.get(name="cats")
    response = client.get(_url(label_set), {"judge": "j", "cost_human": "1", "cost_judge": "0.01",
                                            "target": "budget", "value": "100"})  # fmt: skip
    assert response.status_code == 400
    problem = _clean(response).split('id="plan-problem">', 1)[1].split("</p>", 1)[0]
    assert "cats: line 2, column 'label': PPI takes 0/1 labels" in problem


def test_the_cost_of_a_human_label_from_a_study(client, label_set, settings):
    from annotation.models import StudyPay
    from tests.annotation.factories import make_study

    settings.PROLIFIC_FEE_RATE = "0.25"
    study = make_study(overlap=3, items_per_participant=20)
    StudyPay.objects.create(study=study, reward="2.00", bonus_per_item="0.05", currency="USD")
    query = {"judge": "my-judge", "cost_human": "", "study": str(study.pk),
             "cost_judge": "0.01", "target": "budget", "value": "300", "currency": "GBP"}  # fmt: skip
    page = _clean(client.get(_url(label_set), query))
    typed = _clean(client.get(_url(label_set), {**query, "cost_human": "0.5625", "study": ""}))
    sentence = typed.split('id="plan-sentence"><b>', 1)[1].split("</b>", 1)[0]
    assert sentence.replace(" GBP", " USD") in page  # 3 × (2.00 / 20 + 0.05) × 1.25 = 0.5625
    assert "A human label costs 0.5625 USD: 3 annotator(s) per item" in page

    StudyPay.objects.filter(study=study).update(reward="0", bonus_per_item="0")
    response = client.get(_url(label_set), query)
    assert response.status_code == 400
    assert "has no reward set: type the cost" in _clean(response).split('id="id_study-error">')[1]
    response = client.get(_url(label_set), {**query, "study": ""})
    assert "Give the cost of one human label, or choose a study" in _clean(response)
