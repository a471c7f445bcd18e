"""How2Score with CIs on real models: selector, API and the rankings page. Judge X scores
g1 75% (3 of 4 items without failure), g2 50%, g3 25% on the same 4 procedures."""

import pytest

from judging.scores.reads import how2score_uncertainty


def test_selector(generators_scenario):
    x = generators_scenario["judges"][0]
    report = how2score_uncertainty(judge=x, n_resamples=400, seed=0)
    assert [g["generator"] for g in report["generators"]] == ["rank-g1", "rank-g2", "rank-g3"]
    assert [g["how2score"] for g in report["generators"]] == [0.75, 0.5, 0.25]
    assert all(g["ci"]["n_resamples"] == 400 for g in report["generators"])
    g1_g2, g2_g3 = report["neighbours"]
    # g1 vs g2: only the third item differs (g1 right) → McNemar p = 1; g2 vs g3: 2 vs 1 → p = 1
    assert (g1_g2["n_common"], g1_g2["n_a_only"], g1_g2["n_b_only"]) == (4, 1, 0)
    assert (g2_g3["n_a_only"], g2_g3["n_b_only"]) == (2, 1)
    assert g1_g2["p_value"] == 1.0 and not g1_g2["significant"]
    assert "Holm" in report["multiple_comparisons"]


def test_api_and_rankings_page(generators_scenario, client, make_user):
    client.force_login(make_user("res", role="researcher"))
    body = client.get("/api/how2score/", {"judge": "judge-x", "bootstrap": 100}).json()
    assert body["generators"][0]["how2score"] == 0.75
    assert body["generators"][0]["ci"]["n_resamples"] == 100
    assert client.get("/api/how2score/", {}).status_code == 400
    assert client.get("/api/how2score/", {"judge": "ghost"}).status_code == 400
    assert client.get("/api/how2score/", {"judge": "judge-x", "seed": "-1"}).status_code == 400
    html = client.get("/judging/compare/rankings/", {"judge": "judge-x"}).content.decode()
    assert "How2Score under judge-x, with 95% confidence intervals" in html
    assert "not distinguishable</span> from rank-g2" in html
    assert "Holm" in html and "Avg gen. tokens" in html
    assert "How2Score under judge-x, 95% bootstrap CIs" in html  # the plot with whiskers


@pytest.mark.parametrize("bootstrap", ["0"])
def test_api_without_intervals(generators_scenario, client, make_user, bootstrap):
    client.force_login(make_user("res", role="researcher"))
    body = client.get("/api/how2score/", {"judge": "judge-y", "bootstrap": bootstrap}).json()
    assert "ci" not in body["generators"][0] and body["generators"][0]["how2score"] == 1.0
