"""Active inference and the width rule (validation.active.stats): the inclusion probabilities,
the draw, the estimator against ppi-python, and seeded simulations of the three designs a study
can run — uniform PPI, labels drawn where the judge is unsure, stopping on the width — each
checked for coverage at nominal 90% over 300 repetitions."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest

from validation.active import stats as A
from validation.ppi.stats import how2score_ppi

REPS, ALPHA = 300, 0.1


def test_uncertainty_from_the_judges_votes():
    assert A.uncertainty_from_share(0.0) == A.uncertainty_from_share(1.0) == 0.0
    assert A.uncertainty_from_share(0.5) == 1.0
    assert A.uncertainty_from_share(0.75) == pytest.approx(0.5)
    for bad in (-0.1, 1.2, None):
        with pytest.raises(ValueError, match="vote share"):
            A.uncertainty_from_share(bad)


def test_inclusion_probabilities_sum_to_n_none_zero_none_above_one():
    u = np.r_[np.zeros(90), np.ones(10)]
    pi = A.inclusion_probabilities(u, n_expected=20, mix=0.2)
    assert pi.sum() == pytest.approx(20)
    assert (pi > 0).all() and (pi <= 1).all()
    assert pi[-1] > 5 * pi[0]  # the unsure items are far likelier to go to people
    # more wanted than the unsure items can take: they are capped at 1, the rest share the excess
    capped = A.inclusion_probabilities(u, n_expected=50, mix=0.2)
    assert capped.sum() == pytest.approx(50)
    assert (capped[-10:] == 1).all() and capped.max() == 1
    # no uncertainty anywhere: uniform
    assert A.inclusion_probabilities(np.zeros(10), n_expected=5) == pytest.approx(np.full(10, 0.5))


@pytest.mark.parametrize(
    ("u", "kwargs", "message"),
    [
        ([], {"n_expected": 1}, "no items"),
        ([0.2, 1.5], {"n_expected": 1}, "between 0 and 1"),
        ([0.2, 0.3], {"n_expected": 3}, "at most the 2 items"),
        ([0.2, 0.3], {"n_expected": 1, "mix": 0}, "mix"),
    ],
)
def test_inclusion_probabilities_refuse_what_cannot_be_drawn(u, kwargs, message):
    with pytest.raises(ValueError, match=message):
        A.inclusion_probabilities(u, **kwargs)


def test_the_draw_is_seeded_and_follows_the_probabilities():
    pi = np.r_[np.full(5000, 0.1), np.full(5000, 0.6)]
    first, again = A.draw(pi, seed=3), A.draw(pi, seed=3)
    assert (first == again).all() and (first != A.draw(pi, seed=4)).any()
    assert abs(first[:5000].mean() - 0.1) < 0.02 and abs(first[5000:].mean() - 0.6) < 0.03


def test_the_estimator_is_ppi_python_with_inverse_probability_weights():
    rng = np.random.default_rng(0)
    yhat_all = (rng.random(400) < 0.3).astype(int)
    pi = rng.uniform(0.1, 0.9, 60)
    y, yhat = (rng.random(60) < 0.35).astype(int), yhat_all[:60]
    out = A.active_how2score(human=y, judge_labelled=yhat, probabilities=pi, judge_all=yhat_all)
    low, high = ppi_py.ppi_mean_ci(
        y.astype(float), yhat.astype(float), yhat_all.astype(float), alpha=0.05, w=1 / pi
    )
    assert out["ci"] == pytest.approx([1 - high[0], 1 - low[0]])
    assert out["half_width"] == pytest.approx((high[0] - low[0]) / 2)
    assert 0 <= out["lambda"] <= 1 and out["n_labelled"] == 60 and out["n_population"] == 400
    # equal probabilities: the weights cancel, and the uniform estimate is the same estimator
    flat = A.active_how2score(
        human=y, judge_labelled=yhat, probabilities=np.full(60, 0.15), judge_all=yhat_all
    )
    plain = ppi_py.ppi_mean_ci(
        y.astype(float), yhat.astype(float), yhat_all.astype(float), alpha=0.05
    )
    assert flat["ci"] == pytest.approx([1 - plain[1][0], 1 - plain[0][0]])


def test_too_few_labels_is_undefined_and_bad_input_refused():
    out = A.active_how2score(human=[1], judge_labelled=[1], probabilities=[0.5], judge_all=[1, 0])
    assert out["how2score"] is None and "at least 2" in out["undefined"]
    with pytest.raises(ValueError, match="one value each"):
        A.active_how2score(human=[1, 0], judge_labelled=[1], probabilities=[0.5], judge_all=[1])
    with pytest.raises(ValueError, match="above 0 and at most 1"):
        A.active_how2score(
            human=[1, 0], judge_labelled=[1, 0], probabilities=[0, 0.5], judge_all=[1, 0]
        )


def test_the_width_rule_reads_the_width_and_the_count_only():
    assert A.half_width([0.4, 0.5]) == pytest.approx(0.05)
    assert A.half_width(None) == math.inf
    assert A.target_reached([0.40, 0.48], 0.05, n_labelled=100)
    assert not A.target_reached([0.40, 0.48], 0.05, n_labelled=99)  # too few labels to trust it
    assert not A.target_reached([0.40, 0.52], 0.05, n_labelled=500)
    # the same width anywhere on the scale: the estimate never matters
    assert A.target_reached([0.90, 0.98], 0.05, n_labelled=100)
    assert not A.target_reached(None, 0.05, n_labelled=1000)


# --- seeded simulations ----------------------------------------------------------------------

N, N_LABELS = 1000, 100


def _population(rep: int):
    """A judged population whose errors sit on the items the judge is unsure about: 20% of
    items are uncertain (u 0.5–1, wrong with probability 0.4·u), the rest sure (u ≤ 0.05)."""
    rng = np.random.default_rng(rep)
    unsure = rng.random(N) < 0.2
    u = np.where(unsure, rng.uniform(0.5, 1, N), rng.uniform(0, 0.05, N))
    yhat = (rng.random(N) < 0.3).astype(int)
    y = np.where(rng.random(N) < 0.4 * u, 1 - yhat, yhat)
    return rng, u, yhat, y, 1 - y.mean()


def _covers(ci, truth) -> bool:
    return ci[0] <= truth <= ci[1]


def test_uniform_and_active_intervals_cover_and_active_is_narrower():
    covered = {"uniform": 0, "active": 0}
    widths: dict[str, list[float]] = {"uniform": [], "active": []}
    for rep in range(REPS):
        rng, u, yhat, y, truth = _population(rep)
        chosen = np.zeros(N, dtype=bool)
        chosen[rng.choice(N, N_LABELS, replace=False)] = True
        uniform = how2score_ppi(
            human=y[chosen], judge=yhat[chosen], unlabelled=yhat[~chosen], alpha=ALPHA
        )
        pi = A.inclusion_probabilities(u, n_expected=N_LABELS)
        drawn = A.draw(pi, seed=1_000_000 + rep)  # the draw's randomness is not the data's
        active = A.active_how2score(
            human=y[drawn], judge_labelled=yhat[drawn], probabilities=pi[drawn],
            judge_all=yhat, alpha=ALPHA,
        )  # fmt: skip
        for name, ci in (("uniform", uniform["ci"]), ("active", active["ci"])):
            covered[name] += _covers(ci, truth)
            widths[name].append(A.half_width(ci))
    assert covered["uniform"] / REPS >= 0.88, covered
    assert covered["active"] / REPS >= 0.88, covered
    ratio = np.median(widths["active"]) / np.median(widths["uniform"])
    assert ratio <= 0.85, ratio


def test_the_uniform_half_width_estimated_from_active_labels_is_close_to_uniform():
    estimated, actual = [], []
    for rep in range(60):
        rng, u, yhat, y, _ = _population(rep)
        pi = A.inclusion_probabilities(u, n_expected=N_LABELS)
        drawn = A.draw(pi, seed=2_000_000 + rep)
        active = A.active_how2score(
            human=y[drawn], judge_labelled=yhat[drawn], probabilities=pi[drawn], judge_all=yhat
        )
        estimated.append(active["uniform_half_width"])
        chosen = np.zeros(N, dtype=bool)
        chosen[rng.choice(N, N_LABELS, replace=False)] = True
        actual.append(
            A.half_width(
                how2score_ppi(human=y[chosen], judge=yhat[chosen], unlabelled=yhat[~chosen])["ci"]
            )
        )
    assert np.median(estimated) == pytest.approx(np.median(actual), rel=0.2)


def test_stopping_on_the_width_keeps_coverage():
    target, covered, stops = 0.04, 0, []
    for rep in range(REPS):
        rng, _, yhat, y, truth = _population(rep)
        order = rng.permutation(N)
        for n in range(A.MIN_LABELLED_TO_STOP, N, 10):  # a look every 10 labels
            chosen = np.zeros(N, dtype=bool)
            chosen[order[:n]] = True
            ci = how2score_ppi(
                human=y[chosen], judge=yhat[chosen], unlabelled=yhat[~chosen], alpha=ALPHA
            )["ci"]
            if A.target_reached(ci, target, n_labelled=n):
                break
        stops.append(n)
        covered += _covers(ci, truth)
    assert covered / REPS >= 0.88, covered
    assert min(stops) < max(stops)  # the rule stops at different counts: it reads the data
