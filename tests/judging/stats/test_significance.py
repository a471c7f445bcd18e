"""McNemar, Holm and Spearman against hand-computed values and statsmodels / scipy."""

import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from annotation.agreement import Undefined
from judging import stats


def test_mcnemar_exact_hand_computed_and_statsmodels():
    """1 item only a gets right, 6 only b: p = 2·P(X ≤ 1), X ~ Bin(7, ½) = 2·(1 + 7)/128 = 0.125."""
    a = [1, 0, 0, 0, 0, 0, 0, 1, 1, 0]
    b = [0, 1, 1, 1, 1, 1, 1, 1, 1, 0]
    result = stats.mcnemar(a, b)
    assert (result.n, result.n_a_only, result.n_b_only) == (10, 1, 6)
    assert result.p_value == pytest.approx(0.125)
    table = [[2, 1], [6, 1]]  # rows a right/wrong, columns b right/wrong
    assert result.p_value == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    assert stats.mcnemar([1, 0], [1, 0]).p_value == 1.0


def test_holm_hand_computed_and_statsmodels():
    """p = (0.01, 0.04, 0.03): sorted 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running
    max 0.06; back in order (0.03, 0.06, 0.06)."""
    p = [0.01, 0.04, 0.03]
    assert stats.holm_adjust(p) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm_adjust(p) == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert stats.holm_adjust([0.5, 0.9]) == [1.0, 1.0]
    assert stats.holm_adjust([]) == []


def test_spearman_hand_computed():
    """No ties: d = (−1, 1, −1, 1, 0), ρ = 1 − 6·Σd²/(n(n² − 1)) = 1 − 24/120 = 0.8."""
    result = stats.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert result.n == 5 and result.rho == pytest.approx(0.8)
    assert 0 < result.p_value < 1
    assert stats.spearman([1, 2, 3], [3, 2, 1]).rho == pytest.approx(-1.0)
    assert isinstance(stats.spearman([1, 2], [2, 1]).rho, Undefined)
    assert isinstance(stats.spearman([1, 1, 1], [1, 2, 3]).rho, Undefined)
    assert stats.spearman([1, 2], [2, 1]).to_json()["rho"]["undefined"] == "fewer than three pairs"
