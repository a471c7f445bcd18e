"""Bootstrap intervals: reproducible with a fixed seed, equal to resampling items by hand,
and close to the textbook normal interval where that is known to be accurate."""

import math

import numpy as np
import pytest

from annotation.agreement import Undefined
from judging import stats


def test_mean_ci_is_resampling_items_with_the_seeded_generator():
    values = [1, 1, 0, 1, 0, 1, 1, 1, 0, 1]
    ci = stats.bootstrap_mean_ci(values, n_resamples=500, seed=3)
    rng = np.random.default_rng(3)
    means = np.asarray(values)[rng.integers(0, 10, size=(500, 10))].mean(axis=1)
    assert (ci.low, ci.high) == tuple(np.percentile(means, [2.5, 97.5]))
    assert ci == stats.bootstrap_mean_ci(values, n_resamples=500, seed=3)
    assert ci.seed == 3 and ci.n_resamples == 500 and ci.confidence == 0.95


def test_proportion_ci_matches_the_normal_interval_for_large_n():
    """n = 2,000, p = 0.8: Wald 95% half-width 1.96·√(0.8·0.2/2000) = 0.01753."""
    ci = stats.bootstrap_proportion_ci(1600, 2000, n_resamples=4000, seed=0)
    half = 1.959964 * math.sqrt(0.8 * 0.2 / 2000)
    assert ci.low == pytest.approx(0.8 - half, abs=0.002)
    assert ci.high == pytest.approx(0.8 + half, abs=0.002)
    same = stats.bootstrap_mean_ci([1] * 1600 + [0] * 400, n_resamples=4000, seed=0)
    assert same.low == pytest.approx(ci.low, abs=0.003)


def test_cells_resample_the_table_items():
    draws = stats.bootstrap_cells([40, 10, 5, 45], n_resamples=300, seed=1)
    assert draws.shape == (300, 4) and (draws.sum(axis=1) == 100).all()
    assert (draws == stats.bootstrap_cells([40, 10, 5, 45], n_resamples=300, seed=1)).all()
    assert abs(draws[:, 0].mean() - 40) < 1.5


def test_undefined_and_bad_arguments():
    assert isinstance(stats.bootstrap_mean_ci([]), Undefined)
    assert isinstance(stats.bootstrap_proportion_ci(0, 0), Undefined)
    assert isinstance(stats.paired_bootstrap([], []), Undefined)
    with pytest.raises(ValueError, match="confidence"):
        stats.bootstrap_mean_ci([1, 0], confidence=1.5)
    with pytest.raises(ValueError, match="same length"):
        stats.paired_bootstrap([1, 0], [1])
    nan = stats.percentile_interval(np.array([np.nan, 1.0, 2.0]), confidence=0.9, seed=0)
    assert nan.n_degenerate == 1 and nan.n_resamples == 3


def test_paired_bootstrap():
    """a succeeds on 30 of 40 common items, b on 20: difference 0.25."""
    a = [1] * 30 + [0] * 10
    b = [1] * 20 + [0] * 20
    result = stats.paired_bootstrap(a, b, n_resamples=2000, seed=0)
    assert result.n == 40 and result.difference == pytest.approx(0.25)
    assert result.mean_a == 0.75 and result.mean_b == 0.5
    assert 0 < result.ci.low < 0.25 < result.ci.high
    assert result.p_value < 0.01
    same = stats.paired_bootstrap(a, a, n_resamples=200, seed=0)
    assert same.difference == 0 and same.p_value == 1.0
    assert result == stats.paired_bootstrap(a, b, n_resamples=2000, seed=0)
