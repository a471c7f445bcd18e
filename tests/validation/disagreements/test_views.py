"""The disagreement page, its exports, the API and the validation page's summary: access,
content, refused options (4xx with the reason, never a 5xx)."""

import csv
import io
import json

import pytest
from django.urls import reverse

from validation.disagreements import reads as sel

pytestmark = pytest.mark.django_db

PAGE = "/judging/compare/disagreements/"
API = "/api/disagreements/"


def _q(scenario, **extra):
    return {"study": scenario["study"].pk, "judge": "judge-d", **extra}


def test_urls():
    assert reverse("validation:disagreements") == PAGE
    assert reverse("validation_api:disagreements") == API


@pytest.mark.parametrize("url", [PAGE, API])
def test_access(scenario, client, make_user, url):
    anonymous = client.get(url, _q(scenario))
    assert anonymous.status_code in (302, 401, 403)
    if anonymous.status_code == 302:
        assert "/accounts/login/" in anonymous["Location"]
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url, _q(scenario)).status_code == 403
    client.force_login(make_user("nobody"))  # signed in, no role
    assert client.get(url, _q(scenario)).status_code == 403
    client.force_login(make_user("res", role="researcher"))
    assert client.get(url, _q(scenario)).status_code == 200
    client.force_login(make_user("adm", role="admin"))
    assert client.get(url, _q(scenario)).status_code == 200


def test_page_without_a_choice_shows_the_pickers(scenario, researcher_client):
    response = researcher_client.get(PAGE)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="study"' in html and "judge-d" in html and "disagreement-item" not in html


def test_page_shows_items_side_by_side(scenario, researcher_client):
    response = researcher_client.get(PAGE, _q(scenario))
    html = response.content.decode()
    items = scenario["items"]
    assert response.status_code == 200
    assert html.count('class="disagreement-item') == 4  # the four disagreement kinds
    for k in (1, 2, 4, 5):
        assert f'id="item-{items[k].pk}"' in html
    assert f'id="item-{items[0].pk}"' not in html  # an agreement, not shown by default
    assert "people say failure, judge says none" in html
    assert f"Judge reasoning on {items[2].generation_id}." in html
    assert "<code>P0</code>" in html and "P2 sees a failure in item 2." in html
    assert "could not be parsed" in html  # item 5
    assert "linked-judge" in html and "linked-people" in html
    assert 'id="disagreements-count">4 items' in html
    for word in ("None", "null", "NaN", "undefined"):
        assert f">{word}<" not in html and f" {word} " not in html


def test_highlighted_steps_are_the_linked_ones(scenario, researcher_client):
    html = researcher_client.get(PAGE, _q(scenario, kind="both_failure")).content.decode()
    item = scenario["items"][0]
    start = html.index(f'id="item-{item.pk}"')
    card = html[start : html.index("</article>", start)]
    l2 = card[card.index('class="steps l2"') :]
    l2 = l2[: l2.index("</ol>")]
    steps = l2.split("<li ")[1:]
    assert 'class="linked-judge linked-people"' in steps[1]  # step 2: both
    assert 'class="linked-judge "' in steps[2]  # step 3: the judge only
    assert 'class="linked-people"' in steps[3]  # step 4: an annotator only
    assert 'class=""' in steps[0]  # step 1: nobody
    assert "step overlap 0.33" in card


def test_page_filters_sort_and_pages(scenario, researcher_client):
    html = researcher_client.get(
        PAGE, _q(scenario, kind="all", sort="-item", page_size=3, page=2)
    ).content.decode()
    items = scenario["items"]
    assert "page 2 of 3" in html
    shown = [k for k in range(8) if f'id="item-{items[k].pk}"' in html]
    assert shown == [2, 3, 4]
    assert 'rel="next"' in html and 'rel="prev"' in html
    html = researcher_client.get(PAGE, _q(scenario, topic="Clinic")).content.decode()
    assert html.count('class="disagreement-item') == 2  # items 4 and 5


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"kind": "nope"}, "kind: unknown kind"),
        ({"sort": "size"}, "sort: unknown sort"),
        ({"page": "99"}, "page: there is 1 page of"),
        ({"page": "-1"}, "page: expected a whole number"),
        ({"topic": "Gardening"}, "topic: no judged item"),
        ({"generator": "x\x00"}, "generator:"),
        ({"format": "xml"}, "format: choose one of"),
        ({"format": "csv", "topic": "Gardening"}, "topic: no judged item"),
        ({"study": "abc"}, "study: expected a study id"),
        ({"study": "²"}, "study: expected a study id"),
        ({"page": "²"}, "page: expected a whole number"),
        ({"judge": "judge\x00d"}, "judge: contains a control character"),
        ({"judge": "j" * 129}, "judge: 129 characters"),
    ],
)
def test_page_refuses_bad_options_with_a_reason(scenario, researcher_client, params, reason):
    response = researcher_client.get(PAGE, {**_q(scenario), **params})
    assert response.status_code == 400
    assert reason in response.content.decode()


def test_page_unknown_study_or_judge_is_404(scenario, researcher_client):
    assert researcher_client.get(PAGE, _q(scenario, study=10**9)).status_code == 404
    assert researcher_client.get(PAGE, _q(scenario, study=10**30)).status_code == 404
    assert researcher_client.get(PAGE, _q(scenario, judge="nobody")).status_code == 404


def test_csv_export_is_every_filtered_item(scenario, researcher_client):
    response = researcher_client.get(PAGE, _q(scenario, kind="all", page_size=2, format="csv"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == sel.EXPORT_FIELDS
    assert len(rows) == 8  # not one page: every item of the filter
    first = rows[0]
    assert first["kind"] == "both_failure" and first["judge"] == "judge-d"
    assert json.loads(first["judge_l2_steps"]) == [2, 3]
    assert json.loads(first["people_l2_steps"]) == [2, 4]
    assert float(first["step_overlap"]) == pytest.approx(1 / 3)
    assert [a["annotator"] for a in json.loads(first["annotations"])] == ["P0", "P1", "P2"]
    assert rows[3]["step_overlap"] == ""  # both_none: no overlap


def test_jsonl_export(scenario, researcher_client):
    response = researcher_client.get(PAGE, _q(scenario, format="jsonl"))
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = b"".join(response.streaming_content).decode().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["kind"] for r in rows] == [
        "people_failure",
        "judge_failure",
        "people_split",
        "parse_failed",
    ]
    assert rows[1]["judge_failures"][0]["L2_steps"] == [1]
    assert rows[1]["generated_steps"] == scenario["items"][2].generation.predicted_steps
    assert rows[2]["human_majority"] == "tie" and rows[3]["judge_verdict"] == "parse_failed"


def test_api_returns_the_page_rows(scenario, researcher_client):
    response = researcher_client.get(API, _q(scenario, kind="all", page_size=5))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 8 and body["n_pages"] == 2 and body["page"] == 1
    assert body["counts"]["both_failure"] == 3 and body["counts"]["people_split"] == 1
    assert [r["kind"] for r in body["results"]] == [
        "both_failure",
        "people_failure",
        "judge_failure",
        "both_none",
        "people_split",
    ]
    assert body["results"][0]["step_overlap"]["value"] == pytest.approx(1 / 3)
    assert body["step_overlap"]["mean"]["value"] == pytest.approx(2 / 3)
    assert body["step_overlap"]["n_no_l2_links"] == 1
    assert body["previous"] is None and "page=2" in body["next"]
    second = researcher_client.get(body["next"]).json()
    assert second["page"] == 2 and len(second["results"]) == 3
    assert second["next"] is None and "kind=" in second["previous"]
    assert [r["kind"] for r in second["results"]] == [
        "parse_failed",
        "both_failure",
        "both_failure",
    ]


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"study": ""}, 400, "study"),
        ({"judge": ""}, 400, "judge"),
        ({"study": "x"}, 400, "study"),
        ({"study": "²"}, 400, "study"),
        ({"seed": "³"}, 400, "seed"),
        ({"page_size": "¹"}, 400, "page_size"),
        ({"kind": "nope"}, 400, "kind"),
        ({"sort": "x"}, 400, "sort"),
        ({"page": "5"}, 400, "page"),
        ({"page_size": "0"}, 400, "page_size"),
        ({"topic": "Gardening"}, 400, "topic"),
        ({"bootstrap": "-3"}, 400, "bootstrap"),
        ({"judge": "nobody"}, 400, "judge"),
        ({"judge": "judge\x00d"}, 400, "judge"),
        ({"topic": "a\x00"}, 400, "topic"),
        ({"study": str(10**9)}, 404, None),
    ],
)
def test_api_refuses_bad_options(scenario, researcher_client, params, status, field):
    response = researcher_client.get(API, {**_q(scenario), **params})
    assert response.status_code == status
    if field:
        assert field in response.json()


def test_api_is_in_the_openapi_schema(researcher_client):
    response = researcher_client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    operation = json.loads(response.content)["paths"][API]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"study", "judge", "kind", "topic", "generator", "sort", "page", "page_size"} <= names


def test_validation_page_links_its_cells_here(scenario, researcher_client):
    html = researcher_client.get(
        "/judging/compare/validation/", {"study": scenario["study"].pk, "judge": "judge-d"}
    ).content.decode()
    start = html.index('id="disagreements-summary"')
    section = html[start : html.index("</section>", start)]
    base = f"{PAGE}?study={scenario['study'].pk}&amp;judge=judge-d"
    for kind, count in (
        ("both_failure", 3),
        ("people_failure", 1),
        ("judge_failure", 1),
        ("both_none", 1),
        ("people_split", 1),
        ("parse_failed", 1),
    ):
        assert f'<a href="{base}&amp;kind={kind}" data-kind="{kind}"' in section
        assert f'aria-label="{count} item' in section
    assert "All 4 disagreements" in section
    assert "mean Jaccard <b>0.667</b>" in section and "95% CI" in section
    assert "over 2 items (1 more where nobody linked an L2 step)" in section
