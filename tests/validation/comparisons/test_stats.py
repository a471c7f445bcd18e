"""Pure comparison math, against values computed by hand."""

import math

import pytest

from annotation.agreement import Undefined
from judging.agreement import human_majority, judge_vs_majority
from judging.stats.leaderboard import JudgeTotals, leaderboard_rows
from validation.comparisons.stats import (
    judge_vs_judge,
    kendall_tau_b,
    paired_ranking_comparison,
    ranking,
    ranking_comparison,
)


def test_human_majority_keeps_ties_as_none():
    triples = [
        ("i1", "a", True),
        ("i1", "b", True),
        ("i1", "c", False),  # has_failure 2:1
        ("i2", "a", False),
        ("i2", "b", True),  # tie 1:1
        ("i3", "a", False),  # one label
    ]
    assert human_majority(triples) == {"i1": True, "i2": None, "i3": False}


def test_judge_vs_majority_overall_per_class_and_kappa():
    # human majority: 4 has_failure, 4 no_failure, 1 tie; judge misses i4 and i5, one parse failure, one unjudged.
    majority = {
        1: True,
        2: True,
        3: True,
        4: True,
        5: False,
        6: False,
        7: False,
        8: False,
        9: None,
        10: True,
        11: False,
    }
    verdicts = {
        1: True,
        2: True,
        3: True,
        4: False,
        5: True,
        6: False,
        7: False,
        8: False,
        9: True,
        10: None,
    }
    r = judge_vs_majority(majority=majority, verdicts=verdicts)
    assert (r.n_items, r.n_tied, r.n_parse_failed, r.n_not_judged) == (11, 1, 1, 1)
    assert r.confusion == [[3, 1], [1, 3]]  # rows human (has, no), columns judge
    assert (r.n_compared, r.n_agree) == (8, 6)
    assert r.agreement == pytest.approx(0.75)
    assert r.per_class["has_failure"].agreement == pytest.approx(3 / 4)
    assert r.per_class["no_failure"].agreement == pytest.approx(3 / 4)
    # kappa: p_o = .75, p_e = .5*.5 + .5*.5 = .5 -> .5
    assert r.kappa == pytest.approx(0.5)
    js = r.to_json()
    assert js["agreement"] == {"value": 0.75}
    assert js["per_class"]["has_failure"]["n_items"] == 4


def test_per_class_agreement_unbalanced():
    # 3 has_failure items (judge catches 1), 1 no_failure (judge right): overall 2/4, has 1/3, no 1/1
    majority = {1: True, 2: True, 3: True, 4: False}
    verdicts = {1: True, 2: False, 3: False, 4: False}
    r = judge_vs_majority(majority=majority, verdicts=verdicts)
    assert r.agreement == pytest.approx(0.5)
    assert r.per_class["has_failure"].agreement == pytest.approx(1 / 3)
    assert r.per_class["no_failure"].agreement == pytest.approx(1.0)
    # p_o = .5; human marginals (.75, .25), judge (.25, .75): p_e = .1875 + .1875 = .375 -> (.5-.375)/.625 = .2
    assert r.kappa == pytest.approx(0.2)


def test_undefined_cases_are_explicit():
    r = judge_vs_majority(majority={1: None, 2: True}, verdicts={1: True})
    assert isinstance(r.agreement, Undefined) and isinstance(r.kappa, Undefined)
    assert r.to_json()["agreement"]["value"] is None
    assert "no item" in r.to_json()["agreement"]["undefined"]
    # every label the same category: agreement 100% but kappa undefined
    r = judge_vs_majority(majority={1: True, 2: True}, verdicts={1: True, 2: True})
    assert r.agreement == 1.0
    assert isinstance(r.kappa, Undefined)
    assert isinstance(r.per_class["no_failure"].agreement, Undefined)


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


def test_leaderboard_rows_rates_and_order():
    human_good = judge_vs_majority(majority={1: True, 2: False}, verdicts={1: True, 2: False})
    human_bad = judge_vs_majority(majority={1: True, 2: False}, verdicts={1: False, 2: False})
    rows = leaderboard_rows(
        [
            JudgeTotals(
                judge="b",
                n_judgments=10,
                n_parse_failed=2,
                n_has_failure=4,
                cost=0.5,
                time_s=3,
                gen_tokens=120,
                ref_tokens=100,
                gen_tokens_no_failure=80,
                ref_tokens_no_failure=50,
                gen_tokens_has_failure=40,
                ref_tokens_has_failure=50,
                human=human_bad,
            ),
            JudgeTotals(judge="c"),
            JudgeTotals(judge="a", n_judgments=4, n_has_failure=1, human=human_good),
        ]
    )
    assert [r["judge"] for r in rows] == ["a", "b", "c"]
    b = rows[1]
    assert b["agreement"]["value"] == pytest.approx(0.5)
    assert b["parse_failure_rate"]["value"] == pytest.approx(0.2)
    assert b["failure_rate"]["value"] == pytest.approx(0.5)  # 4 of 8 parsed
    assert b["verbosity"]["value"] == pytest.approx(1.2)
    assert b["verbosity_no_failure"]["value"] == pytest.approx(1.6)
    assert b["verbosity_has_failure"]["value"] == pytest.approx(0.8)
    assert b["cost_per_1k"]["value"] == pytest.approx(50.0)
    c = rows[2]
    assert c["agreement"]["value"] is None and c["failure_rate"]["value"] is None


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
