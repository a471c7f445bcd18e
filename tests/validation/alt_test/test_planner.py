"""The alt-test sample-size planner (validation.alt_test.planner): its array alt-test equals
validation.alt_test.stats.alt_test, its simulated annotators reproduce the reference's published
noise → agreement mapping, and it is seeded."""

import numpy as np
import pytest

from validation.alt_test.planner import array_alt_test, plan
from validation.alt_test.stats import alt_test

SMALL = {"sizes": (60, 120), "n_datasets": 4, "n_boots": 4}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_array_alt_test_equals_alt_test(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=(5, 1, 40))
    labels = np.where(rng.random((5, 4, 40)) < 0.3, rng.integers(0, 3, size=(5, 4, 40)), truth)
    judge = np.where(rng.random((5, 40)) < 0.3, rng.integers(0, 3, size=(5, 40)), truth[:, 0])
    epsilons = [0.0, 0.1, 0.2]
    omegas, rhos = array_alt_test(labels, judge, epsilons=epsilons, q=0.05)
    for b in range(5):
        humans = {f"a{a}": {i: int(labels[b, a, i]) for i in range(40)} for a in range(4)}
        llm = {i: int(judge[b, i]) for i in range(40)}
        for eps in epsilons:
            r = alt_test(humans=humans, judge=llm, epsilon=eps)
            assert omegas[eps][b] == r.winning_rate
            assert rhos[b] == pytest.approx(r.advantage_probability, abs=1e-12)


def test_noise_to_agreement_matches_the_reference_readme():
    """The reference README: annotator noise 0.1 → IAA ≈ 0.80, 0.2 → 0.63, 0.3 → 0.48,
    0.4 → 0.36 (K = 4, mean pairwise Cohen's κ)."""
    for noise, published in ((0.1, 0.80), (0.2, 0.63), (0.3, 0.48), (0.4, 0.36)):
        r = plan(annotator_noise=noise, epsilons=(0.1,), **SMALL)
        assert r["annotator_kappa"] == pytest.approx(published, abs=0.04)


def test_seeded_and_sensible():
    a = plan(seed=3, **SMALL)
    assert a == plan(seed=3, **SMALL)
    assert a != plan(seed=4, **SMALL)
    for row in a["rows"]:
        w = row["winning_rate"]
        assert w["0"] <= w["0.05"] <= w["0.1"] <= w["0.2"]  # a larger ε favours the judge
        assert 0 <= row["advantage_probability_p05"] <= row["advantage_probability"]
        assert row["advantage_probability"] <= row["advantage_probability_p95"] <= 1
    good = plan(judge_noise=0.0, epsilons=(0.1,), **SMALL)
    bad = plan(judge_noise=0.9, epsilons=(0.1,), **SMALL)
    assert good["rows"][-1]["winning_rate"]["0.1"] == 1.0
    assert bad["rows"][-1]["winning_rate"]["0.1"] == 0.0
    assert good["smallest_n_items_passing"]["0.1"] == 60
    assert bad["smallest_n_items_passing"]["0.1"] is None
    assert good["judge_accuracy_vs_majority"] > bad["judge_accuracy_vs_majority"]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_categories": 1}, "n_categories"),
        ({"annotator_noise": 1.5}, "annotator_noise"),
        ({"judge_noise": -0.1}, "judge_noise"),
        ({"sizes": (10, 600)}, "sizes"),
        ({"sizes": ()}, "sizes"),
        ({"epsilons": (2.0,)}, "epsilons"),
        ({"n_annotators": 8, "pool_annotators": 6}, "n_annotators"),
        ({"n_datasets": 50, "n_boots": 50}, "sizes"),  # the work cap
    ],
)
def test_bad_parameters_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        plan(**kwargs)
