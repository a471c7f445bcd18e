"""The metric ↔ human page and API: researchers read (annotators are refused), the report's
numbers on the page, bad options a 400 naming the parameter (page and API), never a 500."""

from __future__ import annotations

import pytest

from tests.judging.factories import set_metric

PAGE = "/judging/compare/metric-validation/"
API = "/api/metric-validation/"


@pytest.fixture
def scored(scenario):
    for g, v in zip(scenario["gens"], [0.1, 0.7, 0.5, 0.6, 0.9, 0.2], strict=True):
        set_metric(g, v)
    return scenario


def test_page_shows_the_detector_with_intervals(scored, client, make_user):
    client.force_login(make_user("res", role="researcher", staff=True))
    study = scored["study"]
    picker = client.get(PAGE, {"study": study.pk}).content.decode()
    assert "scirecipe · score" in picker
    response = client.get(
        PAGE, {"study": study.pk, "pack": "scirecipe", "metric": "score", "bootstrap": "100"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="detector-table"' in html
    assert "0.833" in html  # AUC 5/6
    assert "95% CI" in html
    assert "5 items (3 flagged by the human majority); 1 tied and 0 without the metric" in html
    assert "midpoint of the two groups" in html


def test_page_bad_options_are_a_400_with_the_reason(scored, client, make_user):
    client.force_login(make_user("res", role="researcher", staff=True))
    study = scored["study"]
    response = client.get(
        PAGE, {"study": study.pk, "pack": "scirecipe", "metric": "score", "threshold": "abc"}
    )
    assert response.status_code == 400
    assert "threshold: a number, got &#x27;abc&#x27;" in response.content.decode()


def test_annotators_are_refused(scored, client, make_user):
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(PAGE).status_code in (302, 403)
    assert client.get(API, {"study": scored["study"].pk}).status_code == 403


def test_api_report_and_errors_name_the_parameter(scored, client, make_user):
    client.force_login(make_user("res", role="researcher", staff=True))
    study = scored["study"]
    body = client.get(
        API, {"study": study.pk, "pack": "scirecipe", "metric": "score", "bootstrap": "50"}
    ).json()
    assert body["detector"]["auc"]["value"] == pytest.approx(5 / 6)
    assert body["detector"]["auc"]["ci"]["n_resamples"] == 50
    missing = client.get(API, {"pack": "scirecipe"})
    assert missing.status_code == 400 and set(missing.json()) == {"study", "metric"}
    bad = client.get(
        API, {"study": study.pk, "pack": "p", "metric": "m", "rule": "thresholds", "seed": "-1"}
    )
    assert bad.status_code == 400 and set(bad.json()) == {"cuts", "seed"}
    assert client.get(API, {"study": 999999, "pack": "p", "metric": "m"}).status_code == 404


@pytest.mark.django_db
def test_rating_study_kappa_page_and_a_bad_dimension(client, make_user):
    from annotation.services.study import study_create
    from tests.annotation.factories import make_annotation, make_generations, regular_items

    gens = make_generations(4)
    study = study_create(
        name="ratings",
        generation_ids=[g.pk for g in gens],
        form_type="rating",
        form_config={"points": 2, "low": 0, "dimensions": [{"key": "overall", "label": "Overall"}]},
        min_seconds_per_item=0,
    )
    for item, value, rating in zip(
        regular_items(study), [0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], strict=True
    ):
        set_metric(item.generation, value)
        make_annotation(item=item, annotator="P1", label={"ratings": {"overall": rating}})
    client.force_login(make_user("res", role="researcher", staff=True))
    query = {"study": study.pk, "pack": "scirecipe", "metric": "score", "bootstrap": "50"}
    html = client.get(PAGE, query).content.decode()
    assert 'id="kappa-table"' in html and "<b>1.000</b>" in html  # median cut 0.5: perfect κ
    bad = client.get(API, {**query, "dimension": "order"})
    assert bad.status_code == 400
    assert bad.json() == {"dimension": "dimension: the study has no rating dimension 'order'"}
    page = client.get(PAGE, {**query, "dimension": "order"})
    assert page.status_code == 400 and "no rating dimension" in page.content.decode()
