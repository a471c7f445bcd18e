"""Metric ↔ human statistics (validation.metric_validation.stats, pure), on hand-computed examples:
κ of a discretised metric against rounded mean ratings, AUC / precision / recall of a score as a
critical-error detector (chosen and midpoint thresholds), % pairwise agreement and Kendall's τ-b,
with bootstrap CIs."""

from __future__ import annotations

import pytest

from validation.metric_validation import stats as mh


def test_kappa_thresholds_hand_computed():
    # 3-point scale; cuts 0.3, 0.6 → metric categories [0, 1, 2, 0, 2, 1]
    # mean ratings round (halves up) to [0, 2, 2, 1, 2, 1]; diagonal 4/6, p_e = 12/36 → κ = 0.5
    out = mh.metric_kappa(
        [0.1, 0.5, 0.9, 0.2, 0.8, 0.5],
        [0, 1.5, 2, 1, 5 / 3, 1],
        scale=[0, 1, 2],
        rule="thresholds",
        cuts=[0.3, 0.6],
        n_resamples=200,
    )
    assert out["kappa"]["value"] == pytest.approx(0.5)
    assert out["confusion"] == [[1, 1, 0], [0, 1, 1], [0, 0, 2]]
    ci = out["kappa"]["ci"]
    assert ci["low"] <= 0.5 <= ci["high"] and ci["n_resamples"] == 200
    again = mh.metric_kappa(
        [0.1, 0.5, 0.9, 0.2, 0.8, 0.5],
        [0, 1.5, 2, 1, 5 / 3, 1],
        scale=[0, 1, 2],
        rule="thresholds",
        cuts=[0.3, 0.6],
        n_resamples=200,
    )
    assert again["kappa"]["ci"] == ci  # fixed seed: the same interval


def test_kappa_quantile_rule_and_scale_offset():
    # 2 bins cut at the median 2.5; a 1–2 scale: mean 1.5 rounds up to 2
    out = mh.metric_kappa([1, 2, 3, 4], [1, 1.5, 2, 1.2], scale=[1, 2], n_resamples=0)
    assert out["cuts"] == [2.5] and out["rule"] == "quantiles"
    # metric [0, 0, 1, 1], humans [0, 1, 1, 0]: p_o = 0.5, p_e = 0.5 → κ = 0
    assert out["kappa"] == {"value": 0.0}
    assert mh.round_half_up(2.5) == 3 and mh.round_half_up(1.49) == 1


def test_kappa_rule_errors_are_clear():
    with pytest.raises(ValueError, match="1 cut point\\(s\\) give 2 categories; the rating scale"):
        mh.metric_kappa([0.1], [1], scale=[0, 1, 2], rule="thresholds", cuts=[0.5])
    with pytest.raises(ValueError, match="must increase"):
        mh.metric_kappa([0.1], [1], scale=[0, 1, 2], rule="thresholds", cuts=[0.5, 0.5])
    with pytest.raises(ValueError, match="rule must be one of"):
        mh.metric_kappa([0.1], [1], scale=[0, 1], rule="bins")
    empty = mh.metric_kappa([], [], scale=[0, 1])
    assert empty["kappa"]["value"] is None


def test_detector_midpoint_and_chosen_threshold():
    scores, flagged = [0.1, 0.4, 0.35, 0.8], [True, True, False, False]
    out = mh.critical_detector(scores, flagged, n_resamples=300)
    # AUC: flagged lower than unflagged in 3 of the 4 (flagged, unflagged) pairs
    assert out["auc"]["value"] == pytest.approx(0.75)
    assert out["threshold"] == pytest.approx((0.25 + 0.575) / 2)
    assert out["threshold_rule"].startswith("midpoint")
    # predicted (score < 0.4125): 0.1, 0.4, 0.35 → TP 2, FP 1, FN 0
    assert out["precision"]["value"] == pytest.approx(2 / 3)
    assert out["recall"]["value"] == 1.0
    assert out["confusion"] == {
        "true_positive": 2,
        "false_positive": 1,
        "false_negative": 0,
        "true_negative": 1,
    }
    assert 0 <= out["auc"]["ci"]["low"] <= out["auc"]["ci"]["high"] <= 1
    chosen = mh.critical_detector(scores, flagged, threshold=0.3, n_resamples=0)
    assert (chosen["precision"]["value"], chosen["recall"]["value"]) == (1.0, 0.5)
    high = mh.critical_detector(scores, flagged, direction="high", n_resamples=0)
    assert high["auc"]["value"] == pytest.approx(0.25)


def test_detector_undefined_without_both_groups():
    out = mh.critical_detector([0.1, 0.2], [True, True], n_resamples=10)
    assert out["auc"]["undefined"] == "needs flagged and unflagged items"
    assert out["threshold"] is None and out["precision"]["value"] is None


def test_pairwise_agreement_and_kendall_tau_b():
    pairs = [
        (0.9, 0.1, "first"),  # concordant
        (0.2, 0.8, "second"),  # concordant
        (0.5, 0.4, "second"),  # discordant
        (0.3, 0.3, "first"),  # metric tie
        (0.6, 0.2, "tie"),  # human tie
    ]
    out = mh.pairwise_agreement(pairs, n_resamples=300)
    assert out["agreement"]["value"] == pytest.approx(2 / 4)
    # τ-b = (C − D) / √((C + D + T_m)(C + D + T_h)) = (2 − 1) / √(4 · 4)
    assert out["kendall_tau"]["value"] == pytest.approx(0.25)
    assert (out["n_pairs"], out["n_human_ties"], out["n_metric_ties"]) == (5, 1, 1)
    assert out["agreement"]["ci"]["low"] <= 0.5 <= out["agreement"]["ci"]["high"]
    with pytest.raises(ValueError, match="first, second or tie"):
        mh.pairwise_agreement([(1, 0, "A")])
    import numpy as np  # numpy scores (as read from arrays) work too

    one = mh.pairwise_agreement([(np.float64(1), np.float64(0), "first")], n_resamples=0)
    assert one["agreement"] == {"value": 1.0}


def test_majority_preference():
    assert mh.majority_preference(["first", "first", "second"]) == "first"
    assert mh.majority_preference(["first", "second"]) == "tie"
    assert mh.majority_preference(["tie", "tie", "second"]) == "tie"
    assert mh.majority_preference(["second", "tie"]) == "second"


def test_auc_by_ranks_matches_the_pairwise_definition_with_ties():
    import numpy as np

    rng = np.random.default_rng(1)
    scores = rng.integers(0, 5, size=40).astype(float)  # many ties
    flagged = rng.random(40) < 0.4
    pos, neg = scores[flagged], scores[~flagged]
    diff = pos[:, None] - neg[None, :]
    by_pairs = ((diff < 0).sum() + 0.5 * (diff == 0).sum()) / diff.size
    assert mh.auc(scores, flagged) == pytest.approx(by_pairs)
    assert mh.auc(scores, flagged, direction="high") == pytest.approx(1 - by_pairs)
