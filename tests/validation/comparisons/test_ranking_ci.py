"""Kendall's τ-b between two judges' generator rankings with its percentile bootstrap CI:
τ-b of each resample equals scipy's, the CI equals the percentiles recomputed by hand, is
reproducible with a seed and holds the point estimate; on the rankings page and API."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from validation.comparisons import stats as cmp
from validation.comparisons.ranking_ci import ranking_tau_ci, tau_b_rows


def test_tau_b_rows_equals_scipy_with_ties():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(50, 7)).astype(float)
    y = rng.integers(0, 4, size=(50, 7)).astype(float)
    ours = tau_b_rows(x, y)
    for row in range(50):
        expected = kendalltau(x[row], y[row]).statistic
        if np.isnan(expected):
            assert np.isnan(ours[row])
        else:
            assert ours[row] == pytest.approx(expected, abs=1e-12)
    assert np.isnan(tau_b_rows(np.ones((1, 3)), np.arange(3.0)[None])[0])


def _judged(seed=1, generators=5, per=40):
    rng = np.random.default_rng(seed)
    a, b, generator_of = {}, {}, {}
    for g in range(generators):
        rate = 0.1 + 0.15 * g
        for k in range(per):
            item = f"g{g}-{k}"
            generator_of[item] = f"gen-{g}"
            truth = rng.random() < rate
            a[item] = bool(truth if rng.random() < 0.9 else not truth)
            b[item] = None if k == 0 else bool(truth if rng.random() < 0.8 else not truth)
    return a, b, generator_of


def test_ci_by_hand_reproducible_and_holding_the_estimate():
    a, b, generator_of = _judged()
    point = cmp.paired_ranking_comparison(a=a, b=b, generator_of=generator_of).tau
    ci = ranking_tau_ci(a=a, b=b, generator_of=generator_of, n_resamples=400, seed=9)
    assert ci == ranking_tau_ci(a=a, b=b, generator_of=generator_of, n_resamples=400, seed=9)
    assert ci != ranking_tau_ci(a=a, b=b, generator_of=generator_of, n_resamples=400, seed=10)
    assert ci.low <= point <= ci.high and ci.n_resamples == 400 and "generator" in ci.method
    # by hand: per generator (sorted), the resampled items' pairs of verdicts; τ-b by scipy
    rng = np.random.default_rng(9)
    names = sorted(set(generator_of.values()))
    scores_a, scores_b = np.empty((400, len(names))), np.empty((400, len(names)))
    for g, name in enumerate(names):
        items = [i for i in a if generator_of[i] == name and b[i] is not None]
        cells = np.zeros(4)
        for i in items:
            cells[2 * a[i] + b[i]] += 1
        draws = rng.multinomial(len(items), cells / len(items), size=400)
        scores_a[:, g] = 1 - (draws[:, 2] + draws[:, 3]) / len(items)
        scores_b[:, g] = 1 - (draws[:, 1] + draws[:, 3]) / len(items)
    taus = [kendalltau(scores_a[r], scores_b[r]).statistic for r in range(400)]
    low, high = np.nanpercentile(taus, [2.5, 97.5])
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))


def test_undefined_with_one_generator():
    a = {"x": True, "y": False}
    out = ranking_tau_ci(a=a, b=a, generator_of={"x": "g", "y": "g"})
    assert out.to_json()["undefined"] == "fewer than two generators in common"


@pytest.mark.django_db
def test_rankings_report_page_and_api_carry_the_tau_ci(generators_scenario, client, make_user):
    from validation.comparisons import reads as sel

    x, y = generators_scenario["judges"]
    report = sel.generator_rankings(judges=[x, y], n_resamples=300)
    tau = report["kendall_tau"][0]["tau"]
    assert tau["ci"]["low"] <= tau["value"] <= tau["ci"]["high"]
    assert "ci" not in sel.generator_rankings(judges=[x, y], n_resamples=0)["kendall_tau"][0]["tau"]
    client.force_login(make_user("res", role="researcher"))
    html = client.get("/judging/compare/rankings/", {"judge": [x.name, y.name]}).content.decode()
    shown = sel.generator_rankings(judges=[x, y])["kendall_tau"][0]["tau"]["ci"]
    assert f"95% CI {shown['low']:.3f} – {shown['high']:.3f}" in html
    api = client.get("/api/compare/rankings/", {"judges": f"{x.name},{y.name}"}).json()
    assert api["kendall_tau"][0]["tau"]["ci"]["low"] == pytest.approx(shown["low"])
