"""The plan page's "Create the study from this plan" (admins): prefilled from the plan, posted to
the plan's own address, refusals at their field with the typed text kept, then the new study's
page; researchers read the plan without the button and are refused the post; annotators see
nothing; the post needs its CSRF token."""

from __future__ import annotations

import html
import math
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.models import Study, StudyItem, StudyPay
from tests.validation.label_sets.scenario import csv_text, rows
from tests.validation.ppi_plan.scenario import scored
from validation.models import LabelSet

pytestmark = pytest.mark.django_db

PLAN = {"judge": "my-judge", "cost_human": "0.90", "cost_judge": "0.01",
        "target": "half_width", "value": "10", "currency": "GBP"}  # fmt: skip


@pytest.fixture
def label_set(client, make_user):
    client.force_login(make_user("boss", role="admin"))
    response = client.post(
        "/judging/compare/label-sets/",
        {"name": "pilot", "file": SimpleUploadedFile("labels.csv", csv_text(rows()).encode()),
         "annotator_kind": "crowd", "critical_failures": "on"},
    )  # fmt: skip
    assert response.status_code == 302
    return LabelSet.objects.get(name="pilot")


@pytest.fixture
def world():
    return scored(n=120)


def _url(label_set) -> str:
    query = "&".join(f"{k}={v}" for k, v in PLAN.items())
    return f"/judging/compare/label-sets/{label_set.pk}/plan/?{query}"


def _page(response) -> str:
    return html.unescape(response.content.decode())


def _value(page: str, name: str) -> str:
    return page.split(f'name="study-{name}"', 1)[1].split('value="', 1)[1].split('"', 1)[0]


def _fields(world, **over) -> dict:
    return {"study-name": "From the plan", "study-judge": world["judge"].pk, "study-dataset": "",
            "study-n": "30", "study-overlap": "3", "study-items_per_participant": "4",
            "study-currency": "GBP", "study-reward": "1.50", "study-target_points": "5",
            "study-sampling": "uniform", "study-seed": "3", **over}  # fmt: skip


def test_the_form_is_prefilled_from_the_plan(client, label_set, world):
    response = client.get(_url(label_set))
    assert response.status_code == 200
    page = _page(response)
    n = int(page.split('id="plan-table"')[1].split("<td>", 1)[1].split("</td>")[0].replace(",", ""))
    assert 'id="create-study-form"' in page and ">Create the study</button>" in page
    assert _value(page, "n") == str(n)
    assert _value(page, "target_points") == "10.0"
    assert f'<option value="{world["judge"].pk}" selected>my-judge</option>' in page
    # 0.90 per label = 3 × reward / 20 × (1 + 0.333): the reward is 4.50
    assert _value(page, "reward") == "4.50"
    assert "In GBP with exactly two decimals" in page
    for word in ("None", "NaN", "undefined"):
        assert word not in page.split('id="create-study"')[1]


def test_posting_creates_the_study_and_goes_to_its_page(client, label_set, world):
    response = client.post(_url(label_set), _fields(world))
    study = Study.objects.get(name="From the plan")
    assert response.status_code == 302 and response["Location"] == study.get_absolute_url()
    items = study.items.filter(kind=StudyItem.Kind.REGULAR)
    assert items.count() == 30
    assert study.design["places"] == math.ceil(30 * 3 / 4)
    assert StudyPay.objects.get(study=study).reward == Decimal("1.50")
    assert study.target_half_width == pytest.approx(0.05)
    assert study.design["label_set"] == label_set.pk and study.design["plan"]["n"] > 0
    followed = _page(client.get(response["Location"]))
    assert "created from the plan with 30 items and 23 places" in followed


@pytest.mark.parametrize(
    ("over", "field", "message"),
    [
        ({"study-reward": "150"}, "reward", "150 has no decimals"),
        ({"study-reward": "£1.50"}, "reward", "is not an amount in GBP"),
        ({"study-n": "121"}, "n", "121 items asked, but judge 'my-judge' scored 120"),
        ({"study-n": "1"}, "n", "greater than or equal to 2"),
        ({"study-target_points": "60"}, "target_points", "less than or equal to 49.99"),
        ({"study-sampling": "uncertainty"}, "sampling", "have no seeded samples"),
        ({"study-name": ""}, "name", "This field is required."),
    ],
)
def test_refusals_at_their_field_with_the_text_kept(client, label_set, world, over, field,
                                                    message):  # fmt: skip
    response = client.post(_url(label_set), _fields(world, **over))
    assert response.status_code == 400
    page = _page(response)
    error = page.split(f'id="id_study-{field}-error">', 1)[1].split("</div>", 1)[0]
    assert message in error
    if field in ("reward", "n", "target_points"):
        assert _value(page, field) == over[f"study-{field}"]
    assert 'id="plan-sentence"' in page  # the plan stays shown above
    assert not Study.objects.exists()


def test_a_post_without_a_plan_says_to_plan_first(client, label_set, world):
    response = client.post(f"/judging/compare/label-sets/{label_set.pk}/plan/", _fields(world))
    assert response.status_code == 400
    assert "plan first" in _page(response).split('id="plan-problem">')[1]
    assert not Study.objects.exists()


def test_researchers_read_the_plan_without_the_button_and_cannot_post(label_set, world,
                                                                      make_user):  # fmt: skip
    client = Client()
    client.force_login(make_user("res", role="researcher"))
    page = _page(client.get(_url(label_set)))
    assert 'id="plan-sentence"' in page
    assert "create-study-form" not in page and "Create the study</button>" not in page
    assert "Creating the study is for admins" in page
    assert client.post(_url(label_set), _fields(world)).status_code == 403
    assert not Study.objects.exists()


def test_annotators_are_refused(label_set, world, make_user):
    client = Client()
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(_url(label_set)).status_code in (302, 403)
    assert client.post(_url(label_set), _fields(world)).status_code in (302, 403)
    anonymous = Client().post(_url(label_set), _fields(world))
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    assert not Study.objects.exists()


def test_the_post_needs_its_csrf_token(label_set, world, make_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("boss2", role="admin"))
    assert client.post(_url(label_set), _fields(world)).status_code == 403
    assert not Study.objects.exists()
    page = client.get(_url(label_set)).content.decode()
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    response = client.post(_url(label_set), {**_fields(world), "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and Study.objects.count() == 1


def test_where_the_judge_is_unsure_the_items_keep_their_probability(client, label_set):
    world = scored(n=120, samples=True)
    fields = _fields(world, **{"study-sampling": "uncertainty", "study-n": "40"})
    response = client.post(_url(label_set), fields)
    assert response.status_code == 302
    study = Study.objects.get(name="From the plan")
    items = list(study.items.filter(kind=StudyItem.Kind.REGULAR))
    assert items and all(0 < item.inclusion_probability <= 1 for item in items)
    assert study.design["sampling"] == "uncertainty" and study.design["n_expected"] == 40
    assert study.design["places"] == math.ceil(len(items) * 3 / 4)


def test_a_plan_costed_from_a_study_prefills_that_study_s_pay(client, label_set, world):
    from tests.annotation.factories import make_study

    paid = make_study(overlap=5, items_per_participant=8)
    StudyPay.objects.create(study=paid, reward=Decimal("2.40"), currency="USD")
    query = {**PLAN, "cost_human": "", "study": str(paid.pk)}
    url = f"/judging/compare/label-sets/{label_set.pk}/plan/"
    page = _page(client.get(url, query))
    assert (_value(page, "overlap"), _value(page, "items_per_participant")) == ("5", "8")
    assert _value(page, "reward") == "2.40"
    assert '<option value="USD" selected>USD</option>' in page
