"""The prompt versions of one judge family side by side on a study (selector, page, API), on
the comparison scenario (6 items × 3 annotators; human majority T T T F F, item 6 tied) with a
second prompt version of judge A's family judging the same items:

    judge A (judge_h3 v1): T T F F F F   → right on items 1 2 _ 4 5 (4 of 5)
    judge A2 (judge_h3 v2): F F T T T T  → right on item 3 only (1 of 5)

McNemar on the 5 items both judged with a clear majority: right only with A on items 1, 2, 4,
5 (4), only with A2 on item 3 (1): p = 2·P(X ≤ 1 | X ~ Bin(5, ½)) = 2·(1 + 5)/32 = 0.375."""

from __future__ import annotations

import pytest
from django.urls import reverse
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from judging.services.prompt_versions import prompt_version_create
from judging.stats.significance import mcnemar
from tests.core.factories import api_client
from tests.judging.factories import judged_run, make_judge
from validation.prompt_versions.reads import judge_family, prompt_version_comparison

pytestmark = pytest.mark.django_db

V2_TEXT = "Version two. {goal}\n{reference_steps}\n{steps}"


@pytest.fixture
def versions(scenario):
    v2 = prompt_version_create(text=V2_TEXT, note="shorter")
    a2 = make_judge(name="judge-a-v2", model="gpt-5", prompt_version=v2)
    judged_run(a2, scenario["gens"], [False, False, True, True, True, True])
    # same model and prompt version, other decoding: another family
    make_judge(name="judge-a-hot", model="gpt-5", decoding={"temperature": 0.5})
    return {**scenario, "a2": a2, "v2": v2}


def test_mcnemar_exact_by_hand_and_as_statsmodels_computes_it():
    """10 discordant pairs, 1 one way and 9 the other: p = 2·(C(10,0) + C(10,1))/2¹⁰ =
    22/1024; 3 concordant pairs do not count."""
    a = [True] * 1 + [False] * 9 + [True, True, False]
    b = [False] * 1 + [True] * 9 + [True, True, False]
    test = mcnemar(a, b)
    assert (test.n, test.n_a_only, test.n_b_only) == (13, 1, 9)
    assert test.p_value == pytest.approx(22 / 1024, abs=1e-12)
    table = [[2, 1], [9, 1]]  # rows a right/wrong, columns b right/wrong
    assert test.p_value == pytest.approx(sm_mcnemar(table, exact=True).pvalue, abs=1e-12)
    assert mcnemar([True, False], [True, False]).p_value == 1.0  # nothing discordant


def test_the_family_is_the_judges_configured_alike(versions):
    a, b, _ = versions["judges"]
    assert [j.name for j in judge_family(a)] == ["judge-a", "judge-a-v2"]
    assert [j.name for j in judge_family(versions["a2"])] == ["judge-a", "judge-a-v2"]
    assert [j.name for j in judge_family(b)] == ["judge-b"]


def test_versions_side_by_side_hand_computed(versions):
    a = versions["judges"][0]
    report = prompt_version_comparison(study=versions["study"], judge=a, n_resamples=200)
    first, second = report["versions"]
    assert (first["judge"], first["label"], first["prompt_version"]) == (
        "judge-a",
        "judge_h3 v1",
        1,
    )
    assert (second["label"], second["note"]) == ("judge_h3 v2", "shorter")
    assert first["agreement"]["value"] == pytest.approx(0.8) and "mcnemar" not in first
    assert first["kappa"]["value"] == pytest.approx(0.32 / 0.52)
    # A2: confusion [[1, 2], [2, 0]]; p_o 0.2; κ: p_e = 0.6² + 0.4² = 0.52 → (0.2 − 0.52)/0.48;
    # AC1: π = 0.6, p_e = 2·0.6·0.4 = 0.48 → (0.2 − 0.48)/0.52
    assert second["n_compared"] == 5 and second["agreement"]["value"] == pytest.approx(0.2)
    assert second["kappa"]["value"] == pytest.approx(-0.32 / 0.48)
    assert second["gwet_ac1"]["value"] == pytest.approx(-0.28 / 0.52)
    ci = second["agreement"]["ci"]
    assert ci["n_resamples"] == 200 and ci["low"] <= 0.2 <= ci["high"]
    test = second["mcnemar"]
    assert (test["n"], test["n_a_only"], test["n_b_only"]) == (5, 4, 1)
    assert test["p_value"] == pytest.approx(0.375)
    assert (test["a"], test["b"]) == ("judge-a", "judge-a-v2")
    # ω: 6 items, fewer than the 30 per annotator the alt-test needs
    omega = second["alt_test_winning_rate"]
    assert omega["value"] is None and "30" in omega["undefined"]


def test_page_and_api(versions, client, make_user, roles):
    a = versions["judges"][0]
    client.force_login(make_user("rex", role="researcher", staff=True))
    url = reverse("validation:prompt_versions")
    html = client.get(url, {"study": versions["study"].pk, "judge": "judge-a"}).content.decode()
    assert 'id="prompt-versions-table"' in html
    assert "judge_h3 v2" in html and "p = 0.375" in html and "(chosen)" in html
    assert "95% CI" in html and "shorter" in html
    for word in ("None", "NaN", "undefined", "null"):
        assert word not in html.replace("null_", ""), word
    assert reverse("admin:judging_promptversion_change", args=[versions["v2"].pk]) in html
    # the validation page links here
    page = client.get(
        reverse("validation:validation"), {"study": versions["study"].pk, "judge": "judge-a"}
    )
    assert reverse("validation:prompt_versions") in page.content.decode()
    # a judge with no other version: said so
    html = client.get(url, {"study": versions["study"].pk, "judge": "judge-b"}).content.decode()
    assert 'id="no-other-version"' in html
    # refusals: 4xx, never 5xx
    assert client.get(url, {"study": "x", "judge": "judge-a"}).status_code == 400
    assert client.get(url, {"study": "99999999999999999999999", "judge": "a"}).status_code == 400
    assert client.get(url, {"study": "999999", "judge": "judge-a"}).status_code == 404
    assert client.get(url, {"study": versions["study"].pk, "judge": "nobody"}).status_code == 404

    api = api_client(make_user("ria", role="researcher"))
    api_url = reverse("validation_api:prompt_version_comparison")
    body = api.get(
        api_url, {"study": versions["study"].pk, "judge": a.name, "bootstrap": 50}
    ).json()
    assert body["versions"][1]["mcnemar"]["p_value"] == pytest.approx(0.375)
    assert api.get(api_url, {"judge": a.name}).status_code == 400
    assert api.get(api_url, {"study": versions["study"].pk, "judge": "x"}).status_code == 400
    ann = api_client(make_user("ann", role="annotator"))
    assert ann.get(api_url, {"study": versions["study"].pk, "judge": a.name}).status_code == 403
