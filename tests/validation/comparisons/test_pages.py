"""Comparison pages, API and the judge_compare command: access, numbers shown, plots."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

PAGES = [
    "/judging/compare/",
    "/judging/compare/judges/",
    "/judging/compare/rankings/",
    "/judging/compare/leaderboard/",
]


@pytest.fixture
def researcher_client(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    return client


@pytest.mark.parametrize("url", [*PAGES, "/judging/compare/study/{study}/"])
def test_access(scenario, client, make_user, url):
    url = url.format(study=scenario["study"].pk)
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url).status_code == 403
    client.force_login(make_user("res", role="researcher"))
    assert client.get(url).status_code == 200
    client.force_login(make_user("adm", role="admin"))
    assert client.get(url).status_code == 200


def test_study_page_shows_agreement_chart_and_matrices(
    scenario, researcher_client, django_assert_max_num_queries
):
    url = f"/judging/compare/study/{scenario['study'].pk}/"
    with django_assert_max_num_queries(25):
        response = researcher_client.get(url)
    html = response.content.decode()
    assert 'id="agreement-table"' in html
    assert (
        "80.0%" in html and "66.7%" in html and "40.0%" in html
    )  # A overall, A has_failure, B overall
    assert html.count('class="plot"') == 3  # bar chart + 2 confusion matrices
    assert "judge-a vs human majority" in html
    assert "1 tied" in html
    assert "60.0%" in html  # A vs B on the study's items
    only_b = researcher_client.get(url, {"judge": "judge-b"}).content.decode()
    assert "judge-a vs human majority" not in only_b and "40.0%" in only_b


def test_rankings_and_leaderboard_pages(generators_scenario, scenario, researcher_client):
    html = researcher_client.get(
        "/judging/compare/rankings/", {"judge": ["judge-x", "judge-y"]}
    ).content.decode()
    assert 'id="ranking-table"' in html and "rank-g3" in html
    assert "0.333" in html  # Kendall tau-b
    assert html.count('class="plot"') == 2 and "How2Score under judge-y" in html
    board = researcher_client.get(
        "/judging/compare/leaderboard/", {"study": scenario["study"].pk}
    ).content.decode()
    assert board.index("judge-a") < board.index("judge-b")  # 80% before 40%
    assert "80.0%" in board and "16.7%" in board  # B's parse-failure rate
    assert 'aria-labelledby="leaderboard-agreement-title' in board
    matrix = researcher_client.get(
        "/judging/compare/judges/", {"judge": ["judge-a", "judge-b"]}
    ).content.decode()
    assert "60.0%" in matrix


def test_api(scenario, client, make_user):
    assert client.get("/api/compare/leaderboard/").status_code in (401, 403)
    client.force_login(make_user("ann", role="annotator"))
    assert client.get("/api/compare/leaderboard/").status_code == 403
    client.force_login(make_user("res", role="researcher"))
    study = client.get(f"/api/compare/studies/{scenario['study'].pk}/").json()
    a = next(j for j in study["judges"] if j["judge"] == "judge-a")
    assert (
        a["agreement"]["value"] == pytest.approx(0.8)
        and a["per_class"]["no_failure"]["n_items"] == 2
    )
    pairs = client.get("/api/compare/judges/", {"judges": "judge-a,judge-b"}).json()
    assert pairs["pairs"][0]["agreement"]["value"] == pytest.approx(0.6)
    board = client.get("/api/compare/leaderboard/", {"study": scenario["study"].pk}).json()
    assert board["rows"][0]["judge"] == "judge-a"
    assert client.get("/api/compare/rankings/", {"judges": "judge-a"}).status_code == 200
    bad = client.get("/api/compare/judges/", {"judges": "judge-a,nobody"})
    assert bad.status_code == 400 and "nobody" in bad.json()["judges"]
    assert client.get("/api/compare/leaderboard/", {"study": "x"}).status_code == 400
    assert client.get("/api/compare/studies/999999/").status_code == 404


def test_judge_compare_command(scenario, generators_scenario):
    out = StringIO()
    call_command(
        "judge_compare", "--study", str(scenario["study"].pk), "--format", "json", stdout=out
    )
    report = json.loads(out.getvalue())
    a = next(j for j in report["comparison"]["judges"] if j["judge"] == "judge-a")
    assert a["agreement"]["value"] == pytest.approx(0.8)
    assert report["leaderboard"]["rows"][0]["judge"] == "judge-a"
    out = StringIO()
    call_command("judge_compare", "--judges", "judge-x,judge-y", stdout=out)
    text = out.getvalue()
    assert "Kendall tau-b judge-x vs judge-y: 0.333 over 3 generators" in text
    assert "rank-g1" in text
    out = StringIO()
    call_command("judge_compare", "--study", str(scenario["study"].pk), stdout=out)
    assert "80.0%" in out.getvalue() and "1 tied" in out.getvalue()
    with pytest.raises(CommandError, match="no judge named 'nobody'"):
        call_command("judge_compare", "--judges", "judge-a,nobody")
    with pytest.raises(CommandError, match="--study ID or --judges"):
        call_command("judge_compare")
    with pytest.raises(CommandError, match="no study with id 999999"):
        call_command("judge_compare", "--study", "999999")


def test_api_schema_documents_the_comparison_endpoints(client, make_user):
    client.force_login(make_user("res", role="researcher"))
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    text = response.content.decode()
    for path in (
        "/api/compare/leaderboard/",
        "/api/compare/rankings/",
        "/api/compare/judges/",
        "/api/compare/studies/{id}/",
    ):
        assert path in text
