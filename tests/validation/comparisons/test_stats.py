"""Judge ↔ judge comparison math (pure), against values computed by hand."""

import math

import pytest

from annotation.agreement import Undefined
from validation.comparisons.stats import (
    judge_vs_judge,
    kendall_tau_b,
    paired_ranking_comparison,
    ranking,
    ranking_comparison,
)


def test_judge_vs_judge_on_shared_items():
    a = {"h1": True, "h2": True, "h3": False, "h4": False, "h5": None, "h6": True}
    b = {"h1": True, "h2": False, "h3": False, "h4": False, "h5": True, "h7": False}
    r = judge_vs_judge(a=a, b=b)
    assert (r.n_shared, r.n_agree, r.n_parse_failed, r.n_only_a, r.n_only_b) == (4, 3, 1, 1, 1)
    assert r.confusion == [[1, 1], [0, 2]]
    assert r.agreement == pytest.approx(0.75)
    # p_o .75; a (.5,.5), b (.25,.75): p_e = .125 + .375 = .5 -> .5
    assert r.kappa == pytest.approx(0.5)
    assert isinstance(judge_vs_judge(a={"x": True}, b={"y": True}).agreement, Undefined)


@pytest.mark.parametrize(
    "x, y, expected",
    [
        ([1, 2, 3, 4], [1, 2, 3, 4], 1.0),
        ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
        ([1, 2, 3, 4], [1, 3, 2, 4], 4 / 6),  # C=5, D=1
        ([1, 1, 2, 3], [1, 2, 2, 3], 0.8),  # C=4, D=0, one tie each: 4/sqrt(5*5)
        ([1, 2, 2, 3, 3], [2, 1, 3, 3, 4], 5 / math.sqrt(8 * 9)),  # C=6, D=1; x ties 2, y ties 1
    ],
)
def test_kendall_tau_b_by_hand(x, y, expected):
    assert kendall_tau_b(x, y) == pytest.approx(expected)


def test_kendall_tau_undefined_and_errors():
    assert isinstance(kendall_tau_b([0.5], [0.7]), Undefined)
    assert "same score" in kendall_tau_b([1, 1, 1], [1, 2, 3]).reason
    with pytest.raises(ValueError):
        kendall_tau_b([1, 2], [1])


def test_ranking_and_ranking_comparison():
    a = {"g1": 0.9, "g2": 0.7, "g3": 0.7, "g4": 0.1}
    assert [(r["generator"], r["rank"]) for r in ranking(a)] == [
        ("g1", 1),
        ("g2", 2),
        ("g3", 2),
        ("g4", 4),
    ]
    b = {"g1": 0.8, "g2": 0.6, "g3": 0.5, "g5": 0.4}
    r = ranking_comparison(a, b)
    assert r.generators == ["g1", "g2", "g3"] and r.n_common == 3
    # x = (.9, .7, .7), y = (.8, .6, .5): C = 2, D = 0, x ties 1 -> 2 / sqrt(2 * 3)
    assert r.tau == pytest.approx(2 / math.sqrt(6))


def test_paired_ranking_uses_only_generations_both_judges_scored():
    # judge a scored g1..g6; judge b scored g1..g4 and failed to parse g3
    generator_of = {1: "A", 2: "A", 3: "B", 4: "B", 5: "B", 6: "C"}
    a = {1: False, 2: True, 3: True, 4: False, 5: True, 6: False}
    b = {1: False, 2: False, 3: None, 4: True}
    r = paired_ranking_comparison(a=a, b=b, generator_of=generator_of)
    assert r.n_items == 3  # generations 1, 2, 4
    assert r.generators == ["A", "B"] and r.n_common == 2
    assert r.scores_a == {"A": 0.5, "B": 1.0} and r.scores_b == {"A": 1.0, "B": 0.0}
    assert r.tau == pytest.approx(-1.0)
    out = r.to_json()
    assert out["n_items"] == 3 and out["n_common"] == 2
    # unpaired, judge a's B would be 1/3 (g5 counts) and C would enter the ranking
    unpaired = ranking_comparison({"A": 0.5, "B": 1 / 3, "C": 1.0}, {"A": 1.0, "B": 0.0})
    assert unpaired.n_common == 2


def test_paired_ranking_with_nothing_in_common_is_undefined():
    r = paired_ranking_comparison(a={1: True}, b={2: False}, generator_of={1: "A", 2: "A"})
    assert r.n_items == 0 and r.n_common == 0 and isinstance(r.tau, Undefined)
