"""ECE, Brier score and the length-bias odds ratio against hand-computed values and against
statsmodels fitted directly; their bootstrap CIs reproducible with a seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm

from validation.probes.calibration import (
    bin_index,
    brier_score,
    calibration_report,
    expected_calibration_error,
    reliability_bins,
    vote_share,
)
from validation.probes.length_bias import length_bias

# k = 3 samples: vote shares 0, 1/3, 2/3, 1
P = [0.0, 0.0, 1 / 3, 2 / 3, 2 / 3, 1.0, 1.0, 1.0]
Y = [0, 1, 0, 1, 0, 1, 1, 0]


def test_brier_by_hand():
    # (0)² + (1)² + (1/3)² + (1/3)² + (2/3)² + 0 + 0 + 1² over 8
    expected = (0 + 1 + 1 / 9 + 1 / 9 + 4 / 9 + 0 + 0 + 1) / 8
    assert brier_score(P, Y) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.333333333, abs=1e-8)


def test_ece_by_hand_with_ten_bins():
    # bins: 0 → {0, 0} rate 1/2 gap 1/2; 3 → {1/3} rate 0 gap 1/3;
    # 6 → {2/3, 2/3} rate 1/2 gap 1/6; 9 (p = 1 in the last) → {1,1,1} rate 2/3 gap 1/3
    expected = (2 * 0.5 + 1 * (1 / 3) + 2 * (1 / 6) + 3 * (1 / 3)) / 8
    assert expected_calibration_error(P, Y, n_bins=10) == pytest.approx(expected, abs=1e-12)
    bins = reliability_bins(P, Y, n_bins=10)
    assert [b["n"] for b in bins] == [2, 0, 0, 1, 0, 0, 2, 0, 0, 3]
    assert bins[9]["observed_rate"] == pytest.approx(2 / 3)
    assert bins[1]["mean_confidence"] is None and bins[1]["observed_rate"] is None
    # two bins: [0, .5) holds 0, 0, 1/3 ; [.5, 1] the rest
    two = (3 * abs(1 / 3 - 1 / 9) + 5 * abs(3 / 5 - (4 / 3 + 3) / 5)) / 8
    assert expected_calibration_error(P, Y, n_bins=2) == pytest.approx(two, abs=1e-12)


def test_bin_edges_and_perfect_calibration():
    assert bin_index(np.array([0.0, 0.3, 0.7, 0.999, 1.0]), 10).tolist() == [0, 3, 7, 9, 9]
    # a judge whose vote share equals the observed rate in each bin has ECE 0
    assert expected_calibration_error([0.5, 0.5, 1.0, 0.0], [1, 0, 1, 0]) == pytest.approx(0.0)
    assert brier_score([1.0, 0.0], [1, 0]) == 0.0


def test_empty_and_bad_inputs():
    report = calibration_report([], [])
    assert report["ece"]["value"] is None and "no item" in report["ece"]["undefined"]
    assert report["brier"]["value"] is None and "ci" not in report["ece"]
    with pytest.raises(ValueError):
        brier_score([1.5], [1])
    with pytest.raises(ValueError):
        brier_score([0.5], [2])
    assert vote_share([True, None, False, True]) == pytest.approx(2 / 3)
    assert vote_share([None, None]) is None


def test_calibration_bootstrap_is_reproducible_and_holds_the_estimate():
    rng = np.random.default_rng(7)
    p = rng.integers(0, 4, size=120) / 3
    y = (rng.random(120) < p).astype(int)
    a = calibration_report(p, y, n_resamples=500, seed=3)
    b = calibration_report(p, y, n_resamples=500, seed=3)
    c = calibration_report(p, y, n_resamples=500, seed=4)
    assert a == b
    assert a["ece"]["ci"] != c["ece"]["ci"]
    for key in ("ece", "brier"):
        ci = a[key]["ci"]
        assert ci["low"] <= a[key]["value"] <= ci["high"]
        assert ci["seed"] == 3 and ci["n_resamples"] == 500
    # the interval is the percentiles of the ECE of each resample of the items, by hand
    draws = np.random.default_rng(3).integers(0, 120, size=(500, 120))
    by_hand = [expected_calibration_error(p[row], y[row]) for row in draws]
    low, high = np.percentile(by_hand, [2.5, 97.5])
    assert a["ece"]["ci"]["low"] == pytest.approx(low) and a["ece"]["ci"]["high"] == pytest.approx(
        high
    )


def _length_data(n=200, seed=1, slope=0.8):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(50, 600, size=n).astype(float)
    human = (rng.random(n) < 0.4).astype(int)
    logit = -2.0 + slope * tokens / 100 + 1.5 * human
    judge = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return judge, tokens, human


def test_length_bias_equals_statsmodels_fitted_directly():
    judge, tokens, human = _length_data()
    out = length_bias(judge, tokens, human)
    x = sm.add_constant(np.column_stack([tokens / 100, human]))
    fit = sm.Logit(judge, x).fit(disp=0)
    ci = fit.conf_int(alpha=0.05)
    assert out["odds_ratio"] == pytest.approx(math.exp(fit.params[1]), rel=1e-8)
    assert out["ci_low"] == pytest.approx(math.exp(ci[1, 0]), rel=1e-8)
    assert out["ci_high"] == pytest.approx(math.exp(ci[1, 1]), rel=1e-8)
    assert out["human_odds_ratio"] == pytest.approx(math.exp(fit.params[2]), rel=1e-8)
    assert out["ci_low"] < out["odds_ratio"] < out["ci_high"]
    assert out["ci_low"] > 1  # the simulated judge punishes length
    # Wald CI by hand: exp(β ± 1.959964·se)
    se = fit.bse[1]
    assert out["ci_high"] == pytest.approx(math.exp(fit.params[1] + 1.959963985 * se), rel=1e-6)


def test_length_bias_by_hand_on_a_saturated_table():
    """Two lengths (0 and 100 tokens), no human covariate variation: the MLE odds ratio is the
    2×2 table's cross ratio, (a·d)/(b·c)."""
    # length 0: 3 failures, 7 not; length 100: 6 failures, 4 not
    judge = [1] * 3 + [0] * 7 + [1] * 6 + [0] * 4
    tokens = [0] * 10 + [100] * 10
    human = [1] * 20
    out = length_bias(judge, tokens, human)
    assert out["odds_ratio"] == pytest.approx((6 / 4) / (3 / 7), rel=1e-8)
    assert out["human_covariate"] is False and "left out" in out["note"]
    se = math.sqrt(1 / 3 + 1 / 7 + 1 / 6 + 1 / 4)
    assert out["ci_low"] == pytest.approx(3.5 * math.exp(-1.959963985 * se), rel=1e-6)


def test_length_bias_undefined_cases():
    assert "fewer than" in length_bias([1, 0], [10, 20], [1, 0])["undefined"]
    assert "same verdict" in length_bias([1] * 12, range(12), [0, 1] * 6)["undefined"]
    separated = length_bias([0] * 6 + [1] * 6, list(range(12)), [0, 1] * 6)
    assert separated["odds_ratio"] is None and "separat" in separated["undefined"]
