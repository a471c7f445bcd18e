"""The judge leaderboard's 95% bootstrap CIs: agreement (overall, per class) and κ with the
human majority from the judge's confusion table, the failure rate over its parsed judgments;
equal to the functions they come from, holding the estimate, reproducible; on the page and
the API."""

from __future__ import annotations

import re

import pytest

from judging.agreement import judge_vs_majority
from judging.stats.binary import binary_agreement
from judging.stats.bootstrap import bootstrap_proportion_ci
from judging.stats.leaderboard import JudgeTotals, add_leaderboard_intervals, leaderboard_rows

MAJORITY = {i: i % 3 == 0 for i in range(30)}
VERDICTS = {i: (i % 3 == 0) != (i % 7 == 0) for i in range(30)}


def _board(n_resamples=500, seed=0):
    human = judge_vs_majority(majority=MAJORITY, verdicts=VERDICTS)
    totals = [
        JudgeTotals(judge="j", n_judgments=32, n_parse_failed=2, n_has_failure=11, human=human),
        JudgeTotals(judge="k", n_judgments=0),
    ]
    rows = leaderboard_rows(totals)
    return add_leaderboard_intervals(rows, totals, n_resamples=n_resamples, seed=seed), human


def test_intervals_equal_their_sources_and_hold_the_estimates():
    rows, human = _board()
    j = next(r for r in rows if r["judge"] == "j")
    expected = binary_agreement(human.confusion, n_resamples=500, seed=0)
    assert j["agreement"]["ci"] == expected["agreement"]["ci"]
    assert j["kappa"]["ci"] == expected["kappa"]["ci"]
    assert j["agreement_has_failure"]["ci"] == expected["per_class"]["has_failure"]["ci"]
    assert j["failure_rate"]["ci"] == bootstrap_proportion_ci(11, 30, n_resamples=500).to_json()
    for key in ("agreement", "kappa", "failure_rate", "agreement_no_failure"):
        ci = j[key]["ci"]
        assert ci["low"] <= j[key]["value"] <= ci["high"] and ci["seed"] == 0
    assert _board()[0] == rows and _board(seed=1)[0] != rows
    k = next(r for r in rows if r["judge"] == "k")  # no judgments, no study: no interval
    assert "ci" not in k["failure_rate"] and "ci" not in k["agreement"]
    assert all("ci" not in r["agreement"] for r in _board(n_resamples=0)[0])


@pytest.mark.django_db
def test_leaderboard_page_and_api_show_the_intervals(scenario, client, make_user):
    client.force_login(make_user("res", role="researcher"))
    study = scenario["study"].pk
    api = client.get("/api/compare/leaderboard/", {"study": study}).json()
    row = next(r for r in api["rows"] if r["judge"] == "judge-a")
    ci = row["agreement"]["ci"]
    assert ci["low"] <= row["agreement"]["value"] <= ci["high"]
    html = client.get("/judging/compare/leaderboard/", {"study": study}).content.decode()
    assert f"95% CI {100 * ci['low']:.1f} – {100 * ci['high']:.1f}%" in html
    kappa = row["kappa"]["ci"]
    assert f"95% CI {kappa['low']:.3f} – {kappa['high']:.3f}" in html
    assert not re.search(r"\b(None|NaN|nan|null)\b", html.split('id="leaderboard-table"')[1])
