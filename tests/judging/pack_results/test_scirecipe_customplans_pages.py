"""The SciRecipe and CustomPlans results pages on the demo's worked examples (imported and
scored by real scoring runs; the CustomPlans study of simulated raters), PostgreSQL: roles,
no placeholder text, the worked-example mark, the exports, and the numbers checked by hand in
test_scirecipe.py / test_customplans.py."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from demo.customplans_study import CUSTOMPLANS_STUDY, customplans_study_ensure
from demo.pack_results import demo_pack_results_ensure

pytestmark = pytest.mark.django_db

PAGES = ["/packs/scirecipe/results/", "/packs/customplans/results/"]
PLACEHOLDERS = re.compile(r"\b(None|null|NaN|undefined|nan)\b")


@pytest.fixture
def demo():
    lines = demo_pack_results_ensure()
    study = customplans_study_ensure()
    return lines, study


@pytest.fixture
def researcher(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.mark.parametrize("url", PAGES)
def test_access_by_role(demo, client, make_user, url):
    assert client.get(url).status_code == 302
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url).status_code == 403
    assert client.get("/api" + url).status_code == 403
    for role in ("researcher", "admin"):
        client.force_login(make_user(role[:3], role=role))
        assert client.get(url).status_code == 200


def test_demo_study_is_built_once_from_the_ratings(demo):
    _lines, study = demo
    assert study.name == CUSTOMPLANS_STUDY and study.form_type == "customplans"
    assert study.items.filter(kind="regular").count() == 18
    assert study.items.first().annotations.count() == 3
    assert customplans_study_ensure().pk == study.pk


def test_scirecipe_page(demo, researcher):
    html = researcher.get("/packs/scirecipe/results/").content.decode()
    text = visible_text(html)
    assert not PLACEHOLDERS.search(text), PLACEHOLDERS.search(text)
    assert "Worked examples" in text and "METEOR" in text and "Avg" in text
    assert 'id="table-table1"' in html and 'id="table-score"' in html
    assert "75.79" in text  # Order-LCS of the worked examples, (6/7 + 6/8 + 6/9) / 3
    assert "33.33" in text  # their Step-M
    assert html.count("<svg") >= 1
    assert "KW-F1 has no value" in text  # Avg of eight: the note says why


def test_customplans_page_from_the_scored_ratings(demo, researcher):
    html = researcher.get("/packs/customplans/results/").content.decode()
    text = visible_text(html)
    assert not PLACEHOLDERS.search(text), PLACEHOLDERS.search(text)
    assert "Worked examples" in text
    assert 'id="table-table2"' in html and 'id="table-critical_type-fully_correct"' in html
    assert "55.6" in text and "33.3" in text  # FullyCorrect 5/9 and 3/9
    assert "McNemar exact" in text


def test_exports(demo, researcher):
    response = researcher.get("/packs/customplans/results/export.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    fc = {
        r["generator"]: r
        for r in rows
        if r["section"] == "table2" and r["column"] == "FULLYCORRECT"
    }
    assert float(fc["sequential-worked-example"]["value"]) == pytest.approx(500 / 9)
    assert float(fc["e2e-worked-example"]["value"]) == pytest.approx(300 / 9)
    assert fc["sequential-worked-example"]["vs_next"] == "e2e-worked-example"
    assert float(fc["sequential-worked-example"]["p_holm"]) == pytest.approx(0.625)
    for row in rows:
        assert "None" not in row.values() and "nan" not in row.values()
    data = json.loads(researcher.get("/packs/scirecipe/results/export.json").content)
    assert data == researcher.get("/api/packs/scirecipe/results/").json()
    assert data["headline"] == "table1"
    assert data["worked_examples"]["n"] == 6


def test_customplans_page_from_the_study(demo, researcher, make_user):
    """The same numbers from the study's annotations, plus what only each rater's answer
    gives: the problems flagged (Q2 'missing' for sequential 11.1%, by hand in
    test_customplans.py)."""
    _lines, study = demo
    html = researcher.get("/packs/customplans/results/", {"study": study.pk}).content.decode()
    text = visible_text(html)
    assert not PLACEHOLDERS.search(text), PLACEHOLDERS.search(text)
    assert f'value="{study.pk}" selected' in html and "54 answers" in text
    assert 'id="table-errors-q2"' in html and "11.1" in text
    api = researcher.get("/api/packs/customplans/results/", {"study": study.pk}).json()
    assert api["runs"] == [] and api["study"]["n_annotations"] == 54
    table2 = next(t for t in api["tables"] if t["id"] == "table2")
    by_generator = {r["generator"]: r["cells"] for r in table2["rows"]}
    assert by_generator["sequential-worked-example"]["fully_correct"]["value"] == pytest.approx(
        500 / 9
    )
    assert api["worked_examples"]["n"] == 18
    rows = researcher.get("/packs/customplans/results/export.csv", {"study": study.pk})
    text = b"".join(rows.streaming_content).decode()
    assert "errors-q1" in text


@pytest.mark.parametrize(
    ("url", "params", "message"),
    [
        ("/api/packs/customplans/results/", {"study": "x"}, "whole number"),
        ("/api/packs/customplans/results/", {"study": "999999"}, "no study 999999"),
        ("/api/packs/scirecipe/results/", {"study": "1"}, "reads no study"),
    ],
)
def test_bad_study_is_a_400_naming_it(demo, researcher, url, params, message):
    response = researcher.get(url, params)
    assert response.status_code == 400
    assert message in str(response.json()["study"])
    page = researcher.get(url.replace("/api", ""), params)
    assert page.status_code == 400 and "study" in page.content.decode()


def test_a_study_of_another_form_is_refused(demo, researcher):
    from tests.annotation.factories import make_study

    other = make_study(n_items=1)
    response = researcher.get("/api/packs/customplans/results/", {"study": other.pk})
    assert response.status_code == 400
    assert "not the CustomPlans form" in str(response.json()["study"])
