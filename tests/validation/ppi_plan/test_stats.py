"""The plan's numbers: ppi_py.ppi_mean_power's allocation on the same inputs, the half-width
z·σ/√effective_n, the people-only column by the classical formula, and a bigger budget never
giving a wider interval."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from ppi_py import ppi_mean_power, ppi_power

from validation.ppi_plan.stats import (
    BUDGET,
    EFFECTIVE_N,
    HALF_WIDTH,
    PlanError,
    plan_from_pilot,
    plan_stated,
    z_value,
)


def _pilot(seed: int, n: int = 200, rate: float = 0.2, agree: float = 0.85):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(int)
    yhat = np.where(rng.random(n) < agree, y, 1 - y)
    return y, yhat


CASES = [
    # seed, cost_human, cost_judge, target, value
    (0, 0.50, 0.01, BUDGET, 500.0),
    (1, 2.00, 0.05, BUDGET, 1200.0),
    (2, 0.80, 0.002, BUDGET, 75.0),
    (3, 0.50, 0.01, EFFECTIVE_N, 400),
    (4, 1.25, 0.03, EFFECTIVE_N, 1000),
    (5, 3.00, 0.02, EFFECTIVE_N, 150),
]


@pytest.mark.parametrize(("seed", "cost_human", "cost_judge", "target", "value"), CASES)
def test_allocation_equals_ppi_mean_power(seed, cost_human, cost_judge, target, value):
    y, yhat = _pilot(seed)
    got = plan_from_pilot(human=y, judge=yhat, unlabelled=40, cost_human=cost_human,
                          cost_judge=cost_judge, target=target, value=value)  # fmt: skip
    want = ppi_mean_power(y.astype(float), yhat.astype(float), cost_human, cost_judge,
                          **{("budget" if target == BUDGET else "effective_n"): value})  # fmt: skip
    assert (got["n"], got["N"], got["effective_n"]) == (want["n"], want["N"], want["effective_n"])
    assert got["cost"] == pytest.approx(want["cost"]) and got["ppi_corr"] == want["ppi_corr"]
    assert got["N"] > 0 and got["judge_verdicts"] == got["n"] + got["N"]
    assert got["cost"] == pytest.approx(got["n"] * cost_human + got["judge_verdicts"] * cost_judge)
    sigma = float(np.std(y))
    assert got["sigma"] == pytest.approx(math.sqrt(y.mean() * (1 - y.mean())))
    assert got["half_width"] == pytest.approx(1.959964 * sigma / math.sqrt(got["effective_n"]))
    assert got["pilot"] == {"n_labelled": 200, "n_unlabelled": 40}
    # people alone: the classical n = (z σ / h)² for the same half-width, at cost_human each
    classical_n = (z_value() * sigma / got["half_width"]) ** 2
    assert got["people_only"]["n"] == round(classical_n)
    assert got["people_only"]["cost"] == pytest.approx(round(classical_n) * cost_human)
    assert got["people_only"]["cost"] > got["cost"]


@pytest.mark.parametrize("target_width", [0.05, 0.03, 0.02, 0.01])
def test_half_width_target_is_reached_at_the_cheapest_cost(target_width):
    y, yhat = _pilot(7)
    got = plan_from_pilot(human=y, judge=yhat, cost_human=0.6, cost_judge=0.01,
                          target=HALF_WIDTH, value=target_width)  # fmt: skip
    sigma = float(np.std(y))
    needed = math.ceil((z_value() * sigma / target_width) ** 2)
    want = ppi_mean_power(y.astype(float), yhat.astype(float), 0.6, 0.01, effective_n=needed)
    assert (got["n"], got["N"], got["cost"]) == (want["n"], want["N"], want["cost"])
    # ppi_py rounds n and N: the expected half-width is the target within rounding
    assert got["half_width"] <= target_width * 1.002
    assert got["people_only"]["n"] == got["effective_n"]
    assert got["target"] == {"kind": HALF_WIDTH, "value": target_width}


def test_stated_correlation_equals_ppi_power_and_says_so():
    got = plan_stated(ppi_corr=0.7, sigma=0.4, cost_human=0.5, cost_judge=0.01,
                      target=EFFECTIVE_N, value=700)  # fmt: skip
    want = ppi_power(0.7, cost_X=0, cost_Y=0.5, cost_Yhat=0.01, effective_n=700)
    assert (got["n"], got["N"], got["effective_n"]) == (want["n"], want["N"], want["effective_n"])
    assert got["basis"] == "stated" and "pilot" not in got
    assert got["half_width"] == pytest.approx(z_value() * 0.4 / math.sqrt(want["effective_n"]))


def test_a_judge_that_does_not_pay_for_itself_leaves_people_alone():
    got = plan_stated(ppi_corr=0.1, sigma=0.4, cost_human=0.5, cost_judge=0.4,
                      target=BUDGET, value=100)  # fmt: skip
    assert got["N"] == 0 and got["judge_verdicts"] == 0 and not got["judge_pays"]
    assert got["n"] == got["people_only"]["n"] == 200 and got["saving"] == 0


@pytest.mark.parametrize("ppi_corr", [0.3, 0.6, 0.9])
def test_a_bigger_budget_never_gives_a_wider_interval(ppi_corr):
    widths = [
        plan_stated(
            ppi_corr=ppi_corr,
            sigma=0.4,
            cost_human=0.5,
            cost_judge=0.01,
            target=BUDGET,
            value=budget,
        )["half_width"]
        for budget in range(20, 2001, 7)
    ]
    assert all(b <= a for a, b in itertools.pairwise(widths))
    assert widths[-1] < widths[0]


def test_a_smaller_target_never_costs_less():
    y, yhat = _pilot(11)
    costs = [
        plan_from_pilot(
            human=y, judge=yhat, cost_human=0.5, cost_judge=0.01, target=HALF_WIDTH, value=w / 1000
        )["cost"]
        for w in range(60, 9, -1)
    ]
    assert all(b >= a for a, b in itertools.pairwise(costs))


def test_a_judge_with_one_verdict_carries_no_information():
    y, _ = _pilot(3)
    got = plan_from_pilot(human=y, judge=[0] * len(y), cost_human=1, cost_judge=0.01,
                          target=BUDGET, value=100)  # fmt: skip
    assert got["ppi_corr"] == 0 and got["N"] == 0 and "one verdict" in got["note"]


def test_a_judge_uncorrelated_with_people_leaves_them_alone():
    # ρ computes to ~1e-17 here, where ppi_mean_power would divide by its rounding error
    human = [i % 4 == 0 for i in range(12)]
    judge = [i % 3 == 0 for i in range(12)]
    got = plan_from_pilot(human=human, judge=judge, cost_human=0.9, cost_judge=0.02,
                          target=BUDGET, value=300)  # fmt: skip
    assert got["N"] == 0 and got["n"] == 333 and "uncorrelated" in got["note"]


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"human": [1], "judge": [1]}, "labels", "at least 2"),
        ({"human": [1, 1, 1], "judge": [1, 0, 1]}, "labels", "same label"),
        ({"cost_human": 0}, "cost_human", "above 0"),
        ({"cost_judge": -1}, "cost_judge", "above 0"),
        ({"cost_judge": 1e-300}, "cost_judge", "at least 1e-06"),
        ({"target": "width"}, "target", "expected one of"),
        ({"target": HALF_WIDTH, "value": 3}, HALF_WIDTH, "below 0.5"),
        ({"target": EFFECTIVE_N, "value": 10.5}, EFFECTIVE_N, "whole number"),
        ({"value": float("nan")}, BUDGET, "above 0"),
        ({"value": 1e308}, BUDGET, "at most 1,000,000,000,000"),
    ],
)
def test_refusals_name_the_input(kwargs, field, words):
    args = {"human": [0, 1, 0, 1], "judge": [0, 1, 1, 1], "cost_human": 1.0,
            "cost_judge": 0.01, "target": BUDGET, "value": 100.0, **kwargs}  # fmt: skip
    with pytest.raises(PlanError, match=words) as info:
        plan_from_pilot(**args)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"ppi_corr": 1.0}, "ppi_corr"), ({"ppi_corr": float("nan")}, "ppi_corr"),
     ({"sigma": 0.7}, "sigma"), ({"sigma": 0}, "sigma")],
)  # fmt: skip
def test_stated_refusals_name_the_input(kwargs, field):
    args = {"ppi_corr": 0.5, "sigma": 0.4, "cost_human": 1.0, "cost_judge": 0.01,
            "target": BUDGET, "value": 100.0, **kwargs}  # fmt: skip
    with pytest.raises(PlanError) as info:
        plan_stated(**args)
    assert info.value.field == field
