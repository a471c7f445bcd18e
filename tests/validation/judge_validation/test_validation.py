"""The judge validation report (selector, API, command, page) on the comparison scenario:
6 study items × 3 annotators; human majority T T T F F (tie); judge A: T T F F F F;
judge B: T F F F T (parse failed)."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from validation.judge_validation.reads import judge_validation


@pytest.fixture
def report(scenario):
    a = scenario["judges"][0]
    return judge_validation(study=scenario["study"], judge=a, n_resamples=500, seed=0)


def test_judge_against_the_majority_hand_computed(report):
    """Judge A on the 5 items with a clear majority: confusion [[2, 1], [0, 2]].
    Agreement 4/5; has_failure 2/3; no_failure 2/2. κ: p_e = 0.6·0.4 + 0.4·0.6 = 0.48,
    κ = (0.8 − 0.48)/0.52 = 0.615385. AC1: π_has = (3 + 2)/10 = 0.5, p_e = 0.5,
    AC1 = (0.8 − 0.5)/0.5 = 0.6."""
    assert report["items"] == {
        "n_items": 6,
        "n_tied": 1,
        "n_not_judged": 0,
        "n_parse_failed": 0,
        "n_compared": 5,
    }
    assert report["confusion"]["counts"] == [[2, 1], [0, 2]]
    assert report["agreement"]["value"] == pytest.approx(0.8)
    assert report["per_class"]["has_failure"]["value"] == pytest.approx(2 / 3)
    assert report["per_class"]["no_failure"]["value"] == 1.0
    assert report["kappa"]["value"] == pytest.approx(0.32 / 0.52)
    assert report["gwet_ac1"]["value"] == pytest.approx(0.6)
    ci = report["agreement"]["ci"]
    assert ci["n_resamples"] == 500 and ci["low"] <= 0.8 <= ci["high"]


def test_baselines_and_leave_one_out(report):
    """Always has_failure: 3/5; always no_failure: 2/5. Leave-one-out (others' majority):
    P0 agrees on 2 of 3 items where the others are not tied, P1 on 2 of 4, P2 on 2 of 4, so
    the range is 50.0–66.7% and judge A (80%) is above it."""
    has, no = report["baselines"]
    assert has["predictor"] == "always has_failure" and has["agreement"]["value"] == 0.6
    assert no["agreement"]["value"] == 0.4 and no["kappa"]["value"] == 0.0
    loo = {a["annotator_id"]: a for a in report["leave_one_out"]["annotators"]}
    assert (loo["P0"]["n_agree"], loo["P0"]["n_compared"]) == (2, 3)
    assert (loo["P1"]["n_agree"], loo["P1"]["n_compared"]) == (2, 4)
    assert (loo["P2"]["n_agree"], loo["P2"]["n_compared"]) == (2, 4)
    assert loo["P0"]["agreement"]["ci"]["low"] <= 2 / 3 <= loo["P0"]["agreement"]["ci"]["high"]
    assert report["leave_one_out"]["min"]["value"] == 0.5
    assert report["leave_one_out"]["max"]["value"] == pytest.approx(2 / 3)
    assert report["versus_humans"]["position"] == "above"
    assert report["versus_humans"]["difference_from_mean"] == pytest.approx(0.8 - 5 / 9)


def test_human_ac1_and_other_judges(report):
    """Human AC1 over the 6 items (3 raters, item 6 by two): p_a = (1/3 + 1 + 1/3 + 1 + 1/3
    + 0)/6 = 0.5; π_has = mean(2/3, 1, 2/3, 0, 1/3, 1/2) = 19/36; p_e = 2·(19/36)(17/36);
    AC1 = (0.5 − p_e)/(1 − p_e). Judge A vs B on the 5 items both parsed: A T T F F F,
    B T F F F T → 3/5 agree. Judge C judged nothing: no pair with it (only judges with
    verdicts on the study are compared by default)."""
    pe = 2 * (19 / 36) * (17 / 36)
    assert report["human"]["gwet_ac1"]["value"] == pytest.approx((0.5 - pe) / (1 - pe))
    assert report["human"]["gwet_ac1"]["ci"]["n_resamples"] == 500
    (pair,) = report["judge_pairs"]
    assert pair["judge_b"] == "judge-b" and pair["n_shared"] == 5 and pair["n_parse_failed"] == 1
    assert pair["agreement"]["value"] == pytest.approx(0.6)
    assert pair["confusion"] == [[1, 1], [1, 2]]
    (tau,) = report["ranking_tau"]
    assert tau["n_common"] == 1 and tau["n_items"] == 5 and tau["tau"]["value"] is None


def test_reproducible_and_no_bootstrap(scenario):
    a = scenario["judges"][0]
    one = judge_validation(study=scenario["study"], judge=a, n_resamples=300, seed=4)
    two = judge_validation(study=scenario["study"], judge=a, n_resamples=300, seed=4)
    assert one == two
    bare = judge_validation(study=scenario["study"], judge=a, n_resamples=0)
    assert "ci" not in bare["agreement"] and bare["agreement"]["value"] == pytest.approx(0.8)


def test_api(scenario, client, make_user):
    url = "/api/validation/"
    params = {"study": scenario["study"].pk, "judge": "judge-a", "bootstrap": 200}
    assert client.get(url, params).status_code in (401, 403)
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url, params).status_code == 403
    client.force_login(make_user("res", role="researcher"))
    body = client.get(url, params).json()
    assert body["agreement"]["value"] == pytest.approx(0.8)
    assert body["agreement"]["ci"]["n_resamples"] == 200
    assert (
        client.get(url, {**params, "others": "judge-c"}).json()["judge_pairs"][0]["n_shared"] == 0
    )
    missing = client.get(url, {})
    assert missing.status_code == 400 and set(missing.json()) >= {"study", "judge"}
    unknown = client.get(url, {**params, "judge": "nobody"})
    assert unknown.status_code == 400 and "nobody" in unknown.json()["judge"]
    bad_other = client.get(url, {**params, "others": "judge-b,ghost"})
    assert bad_other.status_code == 400 and "ghost" in bad_other.json()["others"]
    assert client.get(url, {**params, "bootstrap": "many"}).status_code == 400
    assert client.get(url, {**params, "study": 999999}).status_code == 404


def test_command(scenario):
    out = StringIO()
    call_command(
        "judge_validation",
        "--study",
        str(scenario["study"].pk),
        "--judge",
        "judge-a",
        "--bootstrap",
        "200",
        "--format",
        "json",
        stdout=out,
    )
    report = json.loads(out.getvalue())
    assert report["gwet_ac1"]["value"] == pytest.approx(0.6)
    text = StringIO()
    call_command(
        "judge_validation", "--study", str(scenario["study"].pk), "--judge", "judge-a", stdout=text
    )
    text = text.getvalue()
    assert "agreement 80.0% [95% CI" in text and "always no_failure (n 5): agreement 40.0%" in text
    assert "The judge is above the annotators' range." in text
    with pytest.raises(CommandError, match="--judge: no judge named 'ghost'"):
        call_command("judge_validation", "--study", str(scenario["study"].pk), "--judge", "ghost")
    with pytest.raises(CommandError, match="--study: no study with id 999999"):
        call_command("judge_validation", "--study", "999999", "--judge", "judge-a")


def test_page(scenario, client, make_user):
    url = "/judging/compare/validation/"
    client.force_login(make_user("ann", role="annotator"))
    assert client.get(url).status_code == 403
    client.force_login(make_user("res", role="researcher"))
    empty = client.get(url)
    assert empty.status_code == 200 and "validation-table" not in empty.content.decode()
    html = client.get(url, {"study": scenario["study"].pk, "judge": "judge-a"}).content.decode()
    assert 'id="validation-table"' in html and "always has_failure" in html
    assert "80.0%" in html and "95% CI" in html and "0.600" in html  # agreement, AC1
    assert "<b>above</b>" in html and "judge-b" in html
    assert html.count("<svg") >= 2 and "nan" not in html.lower().split()
    assert client.get(url, {"study": scenario["study"].pk, "judge": "ghost"}).status_code == 404


def test_a_study_without_labels_says_what_is_missing_not_an_error(scenario, client, make_user):
    from tests.annotation.factories import make_study

    empty = make_study(n_items=3)
    a = scenario["judges"][0]
    report = judge_validation(study=empty, judge=a, n_resamples=100)
    assert report["items"]["n_compared"] == 0
    assert report["agreement"]["value"] is None and "no item" in report["agreement"]["undefined"]
    assert report["gwet_ac1"]["value"] is None and report["human"]["gwet_ac1"]["value"] is None
    assert report["versus_humans"]["position"] == "undefined"
    client.force_login(make_user("res", role="researcher"))
    page = client.get("/judging/compare/validation/", {"study": empty.pk, "judge": a.name})
    body = page.content.decode()
    assert page.status_code == 200 and "no item" in body  # what is missing, said in words
    text = re.sub(r"<[^>]+>", " ", re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", body))
    assert not re.search(r"\b(undefined|None|NaN|null)\b", text)
