"""The alt-test (validation.alt_test.stats) against the reference implementation's outputs on its
published datasets (tests/validation/data/alt_test, see its README), and hand-computed cases."""

import json
from pathlib import Path

import numpy as np
import pytest

from validation.alt_test.stats import alt_test, benjamini_yekutieli, one_sided_p_value

DATA = Path(__file__).resolve().parent.parent / "data" / "alt_test"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def _load(name: str) -> tuple[dict, dict]:
    if name == "mtbench_subset":  # as the README describes
        humans, llms = _load("mtbench")
        humans["author_0"] = dict(list(humans["author_0"].items())[:25])
        return humans, {k: dict(list(v.items())[3:]) for k, v in llms.items()}
    folder = DATA / name
    return (
        json.loads((folder / "human_annotations.json").read_text()),
        json.loads((folder / "llm_annotations.json").read_text()),
    )


CASES = [(d, llm) for d, v in EXPECTED.items() for llm in v["results"]]


@pytest.mark.parametrize(("dataset", "llm"), CASES)
def test_equals_the_reference_on_its_published_data(dataset, llm):
    spec = EXPECTED[dataset]
    expected = spec["results"][llm]
    humans, llms = _load(dataset)
    got = alt_test(
        humans=humans,
        judge=llms[llm],
        scoring=spec["scoring"],
        epsilon=spec["epsilon"],
        q=spec["q"],
    ).to_json()
    assert got["winning_rate"] == expected["winning_rate"]
    assert got["advantage_probability"] == pytest.approx(
        expected["advantage_probability"], abs=1e-12
    )
    assert got["passed"] is expected["passed"]
    assert [a["annotator"] for a in got["annotators"]] == [
        a["annotator"] for a in expected["annotators"]
    ]
    for ours, ref in zip(got["annotators"], expected["annotators"], strict=True):
        assert ours["p_value"] == pytest.approx(ref["p_value"], abs=1e-9, rel=1e-9)
        assert ours["rejected"] is ref["rejected"]
        assert ours["n_items"] == ref["n_items"]
    assert [s["annotator"] for s in got["skipped"]["annotators"]] == expected["skipped_annotators"]
    assert len(got["skipped"]["items"]) == expected["n_dropped_items"]


def test_the_published_verdicts_differ_between_llms():
    """The golden file is not degenerate: cebab_stars has passing and rejected annotators."""
    stars = EXPECTED["cebab_stars"]["results"]
    assert {r["passed"] for r in stars.values()} == {True}
    assert {a["rejected"] for r in stars.values() for a in r["annotators"]} == {True, False}
    assert {r["passed"] for r in EXPECTED["mtbench"]["results"].values()} == {False}


def _design(n, judge_label, human_labels):
    """n items; three annotators with the given per-annotator labels on every item."""
    humans = {a: dict.fromkeys(range(n), lab) for a, lab in human_labels.items()}
    return humans, dict.fromkeys(range(n), judge_label)


def test_hand_computed_everyone_agrees():
    """Everyone (judge included) says 1 on 40 items: every score ties, each annotator's
    differences are all 0; with ε = 0.1 the t statistic is −∞, p = 0, every annotator is
    rejected: ω = 1, ρ = 1, passed."""
    humans, judge = _design(40, 1, {"a": 1, "b": 1, "c": 1})
    r = alt_test(humans=humans, judge=judge, epsilon=0.1)
    assert r.winning_rate == 1.0 and r.advantage_probability == 1.0 and r.passed
    assert [a.p_value for a in r.annotators] == [0.0, 0.0, 0.0]
    # at ε = 0 the same differences make t undefined: p is None, never rejected
    r0 = alt_test(humans=humans, judge=judge, epsilon=0.0)
    assert [a.p_value for a in r0.annotators] == [None, None, None]
    assert r0.winning_rate == 0.0 and not r0.passed
    assert "p_value_undefined" in r0.to_json()["annotators"][0]


def test_hand_computed_judge_always_wrong():
    """The annotators agree (1), the judge says 0: each left-out annotator scores 1, the judge
    0 on every item → differences all 1 ≥ ε, p = 1, nobody rejected, ρ = 0."""
    humans, judge = _design(35, 0, {"a": 1, "b": 1, "c": 1})
    r = alt_test(humans=humans, judge=judge)
    assert r.winning_rate == 0.0 and r.advantage_probability == 0.0 and not r.passed
    assert all(a.p_value == 1.0 for a in r.annotators)


def test_neg_rmse_hand_computed_item():
    """One item, remaining ratings [2, 4]: a left-out 3 scores −1, a judge 4 scores −√2: the
    annotator wins (difference 1); a judge 3 ties (difference 0)."""
    from validation.alt_test.stats import neg_rmse

    assert neg_rmse(3, [2, 4]) == -1.0
    assert neg_rmse(4, [2, 4]) == pytest.approx(-(2**0.5))


def test_items_and_annotators_left_out_are_listed():
    humans = {
        "a": dict.fromkeys(range(31), 1),
        "b": dict.fromkeys(range(31), 1),
        "c": dict.fromkeys(range(29, 40), 1),  # 11 items: skipped
    }
    judge = dict.fromkeys(range(31), 1)
    r = alt_test(humans=humans, judge=judge).to_json()
    assert [s["annotator"] for s in r["skipped"]["annotators"]] == ["c"]
    assert r["skipped"]["annotators"][0]["n_items"] == 2  # items 29, 30 kept
    reasons = {s["item"]: s["reason"] for s in r["skipped"]["items"]}
    assert reasons == {str(i): "fewer than 2 annotators" for i in range(31, 40)}
    assert [a["annotator"] for a in r["annotators"]] == ["a", "b"]
    humans["c"] = {}
    r2 = alt_test(humans=humans, judge=dict.fromkeys(range(30), 1)).to_json()
    assert {s["item"]: s["reason"] for s in r2["skipped"]["items"]} == {"30": "no judge label"}


def test_no_annotator_tested_is_undefined_not_a_number():
    humans = {"a": {1: 0, 2: 1}, "b": {1: 0, 2: 0}}
    r = alt_test(humans=humans, judge={1: 0, 2: 1}).to_json()
    assert r["winning_rate"] is None and r["advantage_probability"] is None
    assert r["passed"] is False and "undefined" in r


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scoring": "f1"}, "scoring"),
        ({"epsilon": 2.0}, "epsilon"),
        ({"q": 0.0}, "q"),
    ],
)
def test_bad_parameters_name_themselves(kwargs, message):
    with pytest.raises(ValueError, match=message):
        alt_test(humans={}, judge={}, **kwargs)


def test_benjamini_yekutieli_hand_computed():
    """m = 4, H_4 = 25/12; thresholds k/4 · 0.05 · 12/25 = 0.006, 0.012, 0.018, 0.024. Sorted
    p 0.001, 0.011, 0.02, 0.5: the largest k with p_(k) ≤ threshold is 2 → the two smallest
    rejected. An undefined p counts in m and is never rejected."""
    assert benjamini_yekutieli([0.5, 0.011, 0.001, 0.02], 0.05) == [False, True, True, False]
    assert benjamini_yekutieli([0.001, None], 0.05) == [True, False]
    # with a fifth (undefined) hypothesis m = 5: thresholds shrink and 0.011 no longer passes
    assert benjamini_yekutieli([0.5, 0.011, 0.001, 0.02, None], 0.05) == [
        False,
        False,
        True,
        False,
        False,
    ]


def test_one_sided_p_value_matches_the_t_distribution():
    """differences [0, 0, 1, 1] − 0.1 … mean 0.5, sd 0.57735, t = (0.5 − 0.1)/(0.57735/2)
    = 1.3856 on 3 df: P(T ≤ 1.3856) = 0.8700."""
    assert one_sided_p_value([0, 0, 1, 1], 0.1) == pytest.approx(0.87002, abs=1e-4)


def _by_step_up(p_values, q):
    """The step-up rule as the reference states it: sort; H_m = Σ 1/i; reject the k smallest
    for the largest k with p_(k) ≤ k/m · q/H_m (an undefined p sorts last, never passes)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i] is None, p_values[i] or 0.0))
    harmonic = sum(1 / i for i in range(1, m + 1))
    k = max(
        (r + 1 for r, i in enumerate(order)
         if p_values[i] is not None and p_values[i] <= (r + 1) / m * q / harmonic),
        default=0,
    )  # fmt: skip
    return [i in set(order[:k]) for i in range(m)]


@pytest.mark.parametrize("seed", range(20))
def test_statsmodels_fdr_by_equals_the_reference_rule(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 12))
    p = [float(x) for x in rng.choice([1e-5, 1e-3, 0.004, 0.01, 0.03, 0.2, 0.9], size=m)]
    if seed % 3 == 0:
        p[0] = None
    for q in (0.05, 0.1):
        assert benjamini_yekutieli(p, q) == _by_step_up(p, q)
