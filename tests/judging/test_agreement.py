"""The judge-vs-majority count and the leaderboard's rows (pure), against values computed by
hand."""

import pytest

from annotation.agreement import Undefined
from judging.agreement import human_majority, judge_vs_majority
from judging.stats.leaderboard import JudgeTotals, leaderboard_rows


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
