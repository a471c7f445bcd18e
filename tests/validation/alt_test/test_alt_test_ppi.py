"""The alt-test of a judge on a study (selector, API, page) for each form type, the planner's
page and API, and How2Score corrected with a study's labels (PPI++) on PostgreSQL: every number
equals the pure functions (validation.alt_test.stats, ppi_py) on the labels the test planted."""

from __future__ import annotations

import html as html_text
import json

import numpy as np
import ppi_py
import pytest

from annotation.services.study import study_create
from benchmarks.models import Generation, Generator
from tests.annotation.factories import make_annotation, make_generations, regular_items
from tests.judging.factories import judged_run, make_judge
from tests.validation.alt_test.scenario import N, alt_test_scenario, ppi_scenario
from validation.alt_test.reads import study_alt_test
from validation.alt_test.stats import alt_test
from validation.ppi.reads import ppi_rankings
from validation.ppi.stats import how2score_ppi

pytestmark = pytest.mark.django_db


@pytest.fixture
def critical():
    return alt_test_scenario()


def _same(section: dict, expected: dict) -> None:
    for key in ("winning_rate", "advantage_probability", "passed", "n_items", "annotators"):
        assert section[key] == expected[key], key
    assert section["skipped"] == expected["skipped"]


def test_critical_failure_study_equals_the_pure_alt_test(critical):
    report = study_alt_test(study=critical["study"], judge=critical["judge"], epsilon=0.1)
    (section,) = report["sections"]
    expected = alt_test(humans=critical["humans"], judge=critical["judge_labels"], epsilon=0.1)
    _same(section, expected.to_json())
    assert section["key"] == "has_failure" and section["scoring"] == "accuracy"
    assert [a["annotator"] for a in section["annotators"]] == ["P0", "P1", "P2"]
    assert section["skipped"]["annotators"] == [
        {"annotator": "P3", "n_items": 5, "reason": "fewer than 30 items"}
    ]
    items = critical["items"]
    assert {s["item"]: s["reason"] for s in section["skipped"]["items"]} == {
        str(items[5].pk): "no judge label",
        str(items[N - 1].pk): "fewer than 2 annotators",
    }
    assert report["rules"]["min_items_per_annotator"] == 30
    # ε moves the verdict: at ε = 0.3 the judge wins more annotators than at ε = −0.2
    wide = study_alt_test(study=critical["study"], judge=critical["judge"], epsilon=0.3)
    strict = study_alt_test(study=critical["study"], judge=critical["judge"], epsilon=-0.2)
    assert wide["sections"][0]["winning_rate"] > strict["sections"][0]["winning_rate"]


def test_pairwise_and_rating_studies():
    firsts = make_generations(31)
    other = Generator.objects.create(name="system-b")
    seconds = [Generation.objects.create(procedure=g.procedure, generator=other) for g in firsts]
    study = study_create(
        name="pairs", generation_ids=[], form_type="pairwise", min_seconds_per_item=0,
        pairs=[[a.pk, b.pk] for a, b in zip(firsts, seconds, strict=True)],
    )  # fmt: skip
    judge = make_judge(name="pair-judge")
    va = [i % 2 == 0 for i in range(31)]
    vb = [i % 3 == 0 for i in range(31)]
    judged_run(judge, firsts + seconds, va + vb)
    humans: dict[str, dict] = {"P0": {}, "P1": {}}
    expected_judge = {}
    for i, item in enumerate(regular_items(study)):
        # the judge prefers the side without a failure; equal verdicts tie
        expected_judge[item.pk] = "tie" if va[i] == vb[i] else ("second" if va[i] else "first")
        for k in range(2):
            vote = ("first", "second", "tie")[(i + k) % 3]
            make_annotation(item=item, annotator=f"P{k}", label={"preferred": vote})
            humans[f"P{k}"][item.pk] = vote
    (section,) = study_alt_test(study=study, judge=judge, epsilon=0.1)["sections"]
    assert section["key"] == "preferred"
    _same(section, alt_test(humans=humans, judge=expected_judge, epsilon=0.1).to_json())

    gens = make_generations(31, prefix="rated")
    config = {"points": 3, "low": 0, "dimensions": [{"key": "overall", "label": "Overall"},
                                                      {"key": "order", "label": "Order"}]}  # fmt: skip
    rated = study_create(name="ratings", generation_ids=[g.pk for g in gens], form_type="rating",
                         form_config=config, min_seconds_per_item=0)  # fmt: skip
    verdicts = [i % 4 == 0 for i in range(31)]
    judged_run(judge, gens, verdicts)
    humans = {"overall": {"P0": {}, "P1": {}}, "order": {"P0": {}, "P1": {}}}
    judge_ratings = {}
    for i, item in enumerate(regular_items(rated)):
        judge_ratings[item.pk] = 0 if verdicts[i] else 2  # the scale's ends
        for k in range(2):
            ratings = {"overall": (i + k) % 3, "order": 2 - (i * k) % 3}
            make_annotation(item=item, annotator=f"P{k}", label={"ratings": ratings})
            for key, value in ratings.items():
                humans[key][f"P{k}"][item.pk] = value
    report = study_alt_test(study=rated, judge=judge, epsilon=0.2)
    assert [s["key"] for s in report["sections"]] == ["overall", "order"]
    for s in report["sections"]:
        assert s["scoring"] == "neg_rmse" and s["title"].endswith("(0–2)")
        want = alt_test(humans=humans[s["key"]], judge=judge_ratings, scoring="neg_rmse",
                        epsilon=0.2)  # fmt: skip
        _same(s, want.to_json())


def test_other_form_types_are_said_not_an_error():
    gens = make_generations(1)
    study = study_create(name="plans", generation_ids=[gens[0].pk], form_type="customplans",
                         min_seconds_per_item=0)  # fmt: skip
    report = study_alt_test(study=study, judge=make_judge(name="x"))
    assert report["sections"] == [] and "customplans" in report["undefined"]


def test_alt_test_api_and_page(critical, client, make_user):
    url = "/api/validation/alt-test/"
    params = {"study": critical["study"].pk, "judge": "alt-judge"}
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url, params).status_code == 403
    assert client.get("/judging/compare/validation/alt-test/", params).status_code == 403
    client.force_login(make_user("res", role="researcher"))
    body = client.get(url, {**params, "epsilon": "0.2"}).json()
    assert body["epsilon"] == 0.2 and body["sections"][0]["annotators"][0]["annotator"] == "P0"
    for bad in ({"epsilon": "x"}, {"epsilon": "2"}, {"epsilon": "nan"}, {"q": "1"}, {"study": ""}):
        response = client.get(url, {**params, **bad})
        assert response.status_code == 400, bad
        assert set(response.json()) & {"epsilon", "q", "study"}
    assert client.get(url, {**params, "study": 999999}).status_code == 404
    assert client.get(url, {**params, "judge": "ghost"}).status_code == 400

    page = "/judging/compare/validation/"
    html = client.get(page, params).content.decode()
    assert 'id="alt-test"' in html and "alt-test/?study=" in html  # the section loads in place
    section = client.get(page + "alt-test/", params, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in section and "P3 (5)" in section and "ε = 0.1" in section
    omega = f"{study_alt_test(study=critical['study'], judge=critical['judge'])['sections'][0]['winning_rate']:.2f}"
    assert f"winning rate ω <b>{omega}</b>" in section
    # the result names its judge and study, opens with a sentence, says "not rejected"
    assert f"Can alt-judge replace the annotators of {critical['study'].name}?" in section
    said = html_text.unescape(section)
    assert (
        "By the alternative annotator test (Calderon et al., 2025; accuracy, ε = 0.1 (the " in said
    )
    assert "the alt-test paper's value for crowd workers), Benjamini–Yekutieli" in said
    assert "alt-judge may" in section and "not rejected" in section
    assert 'name="categories" min="2" max="20" step="1" value="2"' in html  # K from the study
    assert client.get(page + "alt-test/export.xml", params).status_code == 404
    assert client.get(page + "alt-test/export.csv", {"study": params["study"]}).status_code == 404
    export = client.get(page + "alt-test/export.csv", params)
    assert export["Content-Type"].startswith("text/csv")
    lines = b"".join(export.streaming_content).decode().splitlines()
    assert lines[0].startswith("study_id,judge,section,scoring,epsilon")
    assert len(lines) == 1 + 3 + 1 and lines[-1].endswith("fewer than 30 items")
    zero = client.get(page + "alt-test/", {**params, "epsilon": "0"}, HTTP_HX_REQUEST="true")
    assert 'name="epsilon" min="-1" max="1" step="0.01" value="0.0"' in zero.content.decode()
    full = client.get(page + "alt-test/", {**params, "epsilon": "abc"}).content.decode()
    assert "<html" in full and "epsilon: expected a number" in full
    for word in ("undefined", "None", "NaN", "null"):
        assert word not in section and word not in full


def test_planner_api_and_page(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    body = client.get(
        "/api/validation/alt-test/plan/",
        {"sizes": "30,60", "datasets": "2", "boots": "2", "judge_noise": "0", "epsilons": "0.1"},
    ).json()
    assert [r["n_items"] for r in body["rows"]] == [30, 60]
    assert body["rows"][1]["winning_rate"]["0.1"] == 1.0
    for bad in ({"categories": "1"}, {"judge_noise": "2"}, {"sizes": "a"}, {"sizes": "5000"},
                {"datasets": "500"}):  # fmt: skip
        response = client.get("/api/validation/alt-test/plan/", {**bad, "datasets": "1"}
                              if "datasets" not in bad else bad)  # fmt: skip
        assert response.status_code == 400, bad
    html = client.get(
        "/judging/compare/validation/alt-test/plan/", {"categories": "2", "judge_noise": "0.1"},
        HTTP_HX_REQUEST="true",
    ).content.decode()  # fmt: skip
    assert (
        'id="alt-test-plan-table"' in html
        and 'ω</span> at <span class="greek">ε</span> 0.1' in html
    )
    kept = client.get("/judging/compare/validation/alt-test/plan/", {"judge_noise": "0"})
    assert 'name="judge_noise" min="0" max="1" step="0.05" value="0.0"' in kept.content.decode()
    bad = client.get("/judging/compare/validation/alt-test/plan/", {"categories": "x"})
    assert bad.status_code == 200 and "categories: expected a whole number" in bad.content.decode()


@pytest.fixture
def ppi_data():
    return ppi_scenario()


def test_ppi_rankings_equal_ppi_py(ppi_data, client, make_user):
    report = ppi_rankings(study=ppi_data["study"], judge=ppi_data["judge"])
    rows = {r["generator"]: r for r in report["generators"]}
    assert set(rows) == {"gen-a", "gen-b"} and report["n_study_labelled"] == 24
    for name, row in rows.items():
        mine = [g for g in ppi_data["gens"] if g.generator.name == name]
        lab = [g for g in mine if g.pk in ppi_data["majority"]]
        y = np.array([ppi_data["majority"][g.pk] for g in lab], dtype=float)
        yhat = np.array([ppi_data["verdict"][g.pk] for g in lab], dtype=float)
        yu = np.array([ppi_data["verdict"][g.pk] for g in mine if g not in lab], dtype=float)
        assert (row["n_labelled"], row["n_unlabelled"]) == (12, 28)
        rate = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yu))[0])
        low, high = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05)
        assert row["how2score"] == pytest.approx(1 - rate, abs=1e-12)
        assert row["ci"] == pytest.approx([1 - high[0], 1 - low[0]], abs=1e-12)
        assert row["human_only_how2score"] == pytest.approx(1 - y.mean())
        assert row["judge_only_how2score"] == pytest.approx(1 - np.concatenate([yhat, yu]).mean())
        assert sum(t["n_labelled"] + t["n_unlabelled"] for t in row["topics"]) == 40
        for t in row["topics"]:
            assert set(t) >= {"topic", "how2score", "ci", "judge_only_how2score"}
    assert report["generators"][0]["how2score"] >= report["generators"][1]["how2score"]
    assert how2score_ppi  # the pure function the selector calls

    client.force_login(make_user("res", role="researcher"))
    api = client.get("/api/how2score/ppi/", {"study": ppi_data["study"].pk, "judge": "ppi-judge"})
    assert api.json()["generators"][0]["generator"] == report["generators"][0]["generator"]
    assert (
        client.get("/api/how2score/ppi/", {"study": "x", "judge": "ppi-judge"}).status_code == 400
    )
    rankings = client.get("/judging/compare/rankings/").content.decode()
    assert 'id="how2score-ppi"' in rankings
    section = client.get("/judging/compare/rankings/ppi/", HTTP_HX_REQUEST="true").content.decode()
    assert "corrected with the labels of study ppi study" in section
    first = report["generators"][0]
    said = html_text.unescape(section)
    assert (
        f"Corrected with {first['n_labelled']} items labelled by people, {first['generator']}'s"
        in said
    )
    assert section.count('<figure class="ppi-forest"><svg') == len(report["generators"])
    assert f"λ = {first['lambda']:.2f}" in section and '<span class="greek">λ</span>' in section
    assert f"{100 * report['generators'][0]['how2score']:.1f}" in section
    for word in ("undefined", "None", "NaN", "null"):
        assert word not in section
    export = client.get(
        "/judging/compare/rankings/ppi/export.jsonl",
        {"study": ppi_data["study"].pk, "judge": "ppi-judge"},
    )
    rows = [json.loads(x) for x in b"".join(export.streaming_content).decode().splitlines()]
    assert [r["topic"] for r in rows].count("") == 2 and len(rows) == 2 + 4
    assert rows[0]["how2score"] == pytest.approx(report["generators"][0]["how2score"])
