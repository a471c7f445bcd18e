"""The fixed-sequence threshold of Trust or Escalate against binomial tails worked by hand, its
refusals, and a seeded simulation of its guarantee."""

from __future__ import annotations

import math

import numpy as np
import pytest

from validation.escalation.stats import (
    EscalationError,
    check_levels,
    fixed_sequence_threshold,
    held_out_check,
    min_items,
    vote_confidence,
)


def test_min_items_is_the_smallest_n_with_no_disagreement_that_passes():
    # (0.9)^21 = 0.109 > 0.1, (0.9)^22 = 0.0985 ≤ 0.1
    assert min_items(0.1, 0.1) == 22
    assert 0.9**21 > 0.1 >= 0.9**22
    # (0.5)^1 = 0.5 exactly: one item passes at δ = 0.5
    assert min_items(0.5, 0.5) == 1
    assert min_items(0.05, 0.05) == math.ceil(math.log(0.05) / math.log(0.95))


def test_vote_confidence():
    assert vote_confidence([True, True, False, None]) == (True, pytest.approx(2 / 3))
    assert vote_confidence([False, False, False, True, False]) == (False, pytest.approx(0.8))
    assert vote_confidence([True, False]) == (None, 0.5)
    assert vote_confidence([None, None]) == (None, None)
    assert vote_confidence([]) == (None, None)


def test_scan_by_hand_stops_at_the_first_failure():
    # 30 items at 1.0 with 1 disagreement, 20 at 0.8 with 2, 10 at 0.6 with 6
    conf = [1.0] * 30 + [0.8] * 20 + [0.6] * 10
    agreed = [0] + [1] * 29 + [0, 0] + [1] * 18 + [0] * 6 + [1] * 4
    out = fixed_sequence_threshold(conf, agreed, alpha=0.2, delta=0.1)
    # λ = 1.0: P(Bin(30, .2) ≤ 1) = .8^30 + 30·.2·.8^29
    p1 = 0.8**30 + 30 * 0.2 * 0.8**29
    # λ = 0.8: P(Bin(50, .2) ≤ 3)
    p2 = sum(math.comb(50, j) * 0.2**j * 0.8 ** (50 - j) for j in range(4))
    # λ = 0.6: P(Bin(60, .2) ≤ 9) is above .1
    p3 = sum(math.comb(60, j) * 0.2**j * 0.8 ** (60 - j) for j in range(10))
    assert [s.p_value for s in out.steps] == pytest.approx([p1, p2, p3], rel=1e-9)
    assert [s.passed for s in out.steps] == [True, True, False]
    assert p3 > 0.1
    assert out.threshold == 0.8 and out.n_decided == 50 and out.n_calibration == 60
    assert out.share_decided == pytest.approx(50 / 60)
    assert out.guaranteed_agreement == pytest.approx(0.8)
    assert out.steps[1].risk == pytest.approx(3 / 50) and out.steps[1].n_disagree == 3
    assert out.decides(0.8) and out.decides(0.9) and not out.decides(0.7999)
    assert not out.decides(None)


def test_a_later_pass_does_not_count_after_a_failure():
    # the top group is bad (fails), the lower groups are perfect: the scan stops at once
    conf = [1.0] * 10 + [0.9] * 200
    agreed = [0] * 10 + [1] * 200
    out = fixed_sequence_threshold(conf, agreed, alpha=0.1, delta=0.1)
    assert out.decides_nothing and out.threshold is None and out.n_decided == 0
    assert out.share_decided == 0.0 and len(out.steps) == 1 and not out.steps[0].passed
    assert out.to_json()["decides_nothing"] is True


def test_ties_are_decided_together_and_order_does_not_matter():
    rng = np.random.default_rng(3)
    conf = rng.choice([0.6, 0.8, 1.0], size=200)
    agreed = rng.random(200) < np.where(conf == 1.0, 0.99, np.where(conf == 0.8, 0.9, 0.5))
    a = fixed_sequence_threshold(conf, agreed, alpha=0.1, delta=0.1)
    perm = rng.permutation(200)
    b = fixed_sequence_threshold(conf[perm], agreed[perm], alpha=0.1, delta=0.1)
    assert a == b
    assert [s.threshold for s in a.steps] == [1.0, 0.8, 0.6][: len(a.steps)]
    assert a.steps[0].n == int((conf == 1.0).sum())
    # floating noise in a confidence does not split a group
    noisy = conf + np.where(conf == 0.8, 1e-12, 0.0)
    c = fixed_sequence_threshold(np.clip(noisy, 0, 1), agreed, alpha=0.1, delta=0.1)
    assert [s.n for s in c.steps] == [s.n for s in a.steps]


def test_held_out_check():
    cal = fixed_sequence_threshold([1.0] * 40 + [0.6] * 40, [1] * 40 + [0] * 40)
    assert cal.threshold == 1.0
    out = held_out_check(cal, [1.0, 1.0, 1.0, 0.8, 0.6], [1, 1, 0, 1, 0])
    assert out["n"] == 5 and out["n_decided"] == 3 and out["share_decided"] == pytest.approx(0.6)
    assert out["agreement_decided"] == pytest.approx(2 / 3)
    assert out["n_escalated"] == 2 and out["agreement_escalated"] == pytest.approx(0.5)
    nothing = fixed_sequence_threshold([1.0] * 30, [0] * 30)
    out = held_out_check(nothing, [1.0, 0.9], [1, 1])
    assert out["n_decided"] == 0 and out["agreement_decided"] is None
    assert out["agreement_escalated"] == 1.0


@pytest.mark.parametrize(
    ("alpha", "delta", "field"),
    [
        (0, 0.1, "alpha"),
        (1, 0.1, "alpha"),
        (-0.1, 0.1, "alpha"),
        (float("nan"), 0.1, "alpha"),
        ("0.1", 0.1, "alpha"),
        (True, 0.1, "alpha"),
        (0.1, 0, "delta"),
        (0.1, 1.5, "delta"),
        (0.1, float("inf"), "delta"),
        (0.1, None, "delta"),
    ],
)
def test_bad_levels_name_the_input(alpha, delta, field):
    with pytest.raises(EscalationError) as err:
        fixed_sequence_threshold([1.0] * 50, [1] * 50, alpha=alpha, delta=delta)
    assert err.value.field == field and field in str(err.value)


def test_bad_items_name_the_input():
    with pytest.raises(EscalationError) as err:
        fixed_sequence_threshold([1.0] * 21, [1] * 21, alpha=0.1, delta=0.1)
    assert err.value.field == "items" and "21 given" in str(err.value) and "22" in str(err.value)
    with pytest.raises(EscalationError) as err:
        fixed_sequence_threshold([], [])
    assert err.value.field == "items"
    with pytest.raises(EscalationError) as err:
        fixed_sequence_threshold([1.2] * 30, [1] * 30)
    assert err.value.field == "confidence"
    with pytest.raises(EscalationError) as err:
        fixed_sequence_threshold([1.0] * 30, [2] * 30)
    assert err.value.field == "agreed"
    with pytest.raises(EscalationError) as err:
        fixed_sequence_threshold([1.0] * 30, [1] * 29)
    assert err.value.field == "agreed"
    assert check_levels(0.05, 0.2) == (0.05, 0.2)


# --- the guarantee, simulated ---------------------------------------------------------------

# k = 5 samples: confidence 1.0, 0.8 or 0.6; the judge errs mostly where it is unsure. The
# judge-decided disagreement is 0.04 at λ = 1.0 (safe at α = 0.1) and
# (0.5·0.04 + 0.3·0.21) / 0.8 = 0.104 at λ = 0.8 (just unsafe).
LEVELS = np.array([1.0, 0.8, 0.6])
SHARE = np.array([0.5, 0.3, 0.2])
ERROR = np.array([0.04, 0.21, 0.40])


def true_agreement(threshold: float | None) -> float | None:
    """The population agreement on the items the judge decides at this threshold."""
    if threshold is None:
        return None
    mine = threshold <= LEVELS
    return 1 - float((SHARE[mine] * ERROR[mine]).sum() / SHARE[mine].sum())


def test_simulated_guarantee_holds_in_at_least_one_minus_delta_of_repetitions():
    alpha = delta = 0.1
    assert true_agreement(1.0) >= 1 - alpha > true_agreement(0.8)
    rng = np.random.default_rng(20250401)
    reps, n_cal = 400, 300
    held, naive_held, decided = 0, 0, []
    for _ in range(reps):
        group = rng.choice(3, size=n_cal, p=SHARE)
        agreed = rng.random(n_cal) >= ERROR[group]
        out = fixed_sequence_threshold(LEVELS[group], agreed, alpha=alpha, delta=delta)
        agreement = true_agreement(out.threshold)
        held += agreement is None or agreement >= 1 - alpha  # deciding nothing is safe
        decided.append(out.share_decided)
        # the naive rule: the lowest threshold whose empirical disagreement is ≤ α
        conf = LEVELS[group]
        naive = [float(v) for v in LEVELS if (~agreed[conf >= v]).mean() <= alpha]
        naive_agreement = true_agreement(min(naive)) if naive else None
        naive_held += naive_agreement is None or naive_agreement >= 1 - alpha
    assert held / reps >= 1 - delta
    # the test is what keeps it: trusting the empirical rate breaks the guarantee
    assert naive_held / reps < 1 - delta
    # and it is not safe by deciding nothing: the confident half is decided almost always
    assert np.median(decided) == pytest.approx(0.5, abs=0.06)
