"""A judge against a binary reference: every number from a 2×2 table, hand-computed."""

import numpy as np
import pytest

from annotation.agreement import cohen_kappa_from_confusion
from judging.stats.binary import binary_agreement, constant_baselines

TABLE = [[40, 10], [5, 45]]  # rows reference has/no, columns judge has/no


def test_point_values_hand_computed():
    """n = 100, agreement (40 + 45)/100 = 0.85; has_failure 40/50 = 0.8; no_failure 45/50 = 0.9.
    κ: p_e = 0.5·0.45 + 0.5·0.55 = 0.5 → (0.85 − 0.5)/0.5 = 0.7.
    AC1: π_has = (50 + 45)/200 = 0.475, p_e = 2·0.475·0.525 = 0.49875,
    AC1 = (0.85 − 0.49875)/(1 − 0.49875) = 0.700748."""
    r = binary_agreement(TABLE, n_resamples=0)
    assert r["n_compared"] == 100 and r["agreement"]["value"] == pytest.approx(0.85)
    assert r["per_class"]["has_failure"]["value"] == pytest.approx(0.8)
    assert r["per_class"]["has_failure"]["n_items"] == 50
    assert r["per_class"]["no_failure"]["value"] == pytest.approx(0.9)
    assert r["kappa"]["value"] == pytest.approx(0.7)
    assert r["gwet_ac1"]["pe"] == pytest.approx(0.49875)
    assert r["gwet_ac1"]["value"] == pytest.approx(0.35125 / 0.50125)
    assert "ci" not in r["agreement"]


def test_intervals_share_resamples_and_are_reproducible():
    r = binary_agreement(TABLE, n_resamples=1000, seed=5)
    assert r == binary_agreement(TABLE, n_resamples=1000, seed=5)
    for stat in (r["agreement"], r["kappa"], r["gwet_ac1"], *r["per_class"].values()):
        assert stat["ci"]["low"] <= stat["value"] <= stat["ci"]["high"]
        assert stat["ci"]["seed"] == 5 and stat["ci"]["n_resamples"] == 1000
    # the κ interval is κ of the resampled tables (from annotation.agreement, its one home)
    from judging.stats.bootstrap import bootstrap_cells

    draws = bootstrap_cells([40, 10, 5, 45], n_resamples=1000, seed=5)
    kappas = [cohen_kappa_from_confusion(d.reshape(2, 2)) for d in draws]
    assert r["kappa"]["ci"]["low"] == pytest.approx(np.percentile(kappas, 2.5))


def test_constant_baselines():
    """Always has_failure agrees on the 50 reference has_failure items: 0.5; κ = 0 by
    construction; AC1: p_a = 0.5, π_has = (50 + 100)/200 = 0.75, p_e = 0.375, AC1 = 0.2."""
    always_has, always_no = constant_baselines(TABLE, n_resamples=200)
    assert always_has["predictor"] == "always has_failure"
    assert always_has["agreement"]["value"] == 0.5
    assert always_has["per_class"]["has_failure"]["value"] == 1.0
    assert always_has["per_class"]["no_failure"]["value"] == 0.0
    assert always_has["kappa"]["value"] == 0.0
    assert always_has["gwet_ac1"]["value"] == pytest.approx(0.2)
    assert always_no["agreement"]["value"] == 0.5
    skewed = constant_baselines([[10, 0], [0, 90]], n_resamples=0)
    assert skewed[1]["agreement"]["value"] == 0.9  # "always no_failure" looks good on raw agreement


def test_empty_table_is_undefined_not_nan():
    r = binary_agreement([[0, 0], [0, 0]], n_resamples=100)
    assert r["agreement"]["value"] is None and "no item" in r["agreement"]["undefined"]
    assert r["kappa"]["value"] is None and r["gwet_ac1"]["value"] is None
    assert r["per_class"]["has_failure"]["value"] is None
