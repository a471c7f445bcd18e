"""Tests for differences and rank correlation: McNemar's exact test for two models on the same
items, Holm's step-down adjustment for several such tests, Spearman's ρ."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotation.agreement import Stat, Undefined, stat_json
from core.lazy import lazy_module

np = lazy_module("numpy")
sps = lazy_module("scipy.stats")


@dataclass(frozen=True)
class McNemar:
    """Two binary outcomes on the same ``n`` items: ``n_a_only`` items where only a succeeds,
    ``n_b_only`` where only b does. ``p_value``: exact two-sided binomial test of
    ``n_a_only`` ~ Bin(n_a_only + n_b_only, ½) (1.0 when there is no discordant item)."""

    n: int
    n_a_only: int
    n_b_only: int
    p_value: float

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "n_a_only": self.n_a_only,
            "n_b_only": self.n_b_only,
            "p_value": self.p_value,
            "test": "McNemar exact (binomial on the discordant items)",
        }


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """McNemar's exact test of paired binary outcomes (``a[i]``, ``b[i]`` on item i)."""
    xa, xb = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if xa.shape != xb.shape:
        raise ValueError("a and b must have the same length (one value per common item)")
    a_only = int((xa & ~xb).sum())
    b_only = int((~xa & xb).sum())
    discordant = a_only + b_only
    p = 1.0 if not discordant else float(sps.binomtest(a_only, discordant, 0.5).pvalue)
    return McNemar(n=len(xa), n_a_only=a_only, n_b_only=b_only, p_value=min(p, 1.0))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (controls the family-wise error rate): sort
    ascending, multiply the i-th smallest (0-based) by (m − i), take running maxima, cap at 1."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


@dataclass(frozen=True)
class Spearman:
    n: int
    rho: Stat
    p_value: float | None

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "rho": stat_json(self.rho), "p_value": self.p_value}


def spearman(x: Sequence[float], y: Sequence[float]) -> Spearman:
    """Spearman's rank correlation (ties get average ranks; scipy's ``spearmanr``) with its
    two-sided p-value; undefined with fewer than three pairs or a constant side."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    n = len(x)
    if n < 3:
        return Spearman(n=n, rho=Undefined("fewer than three pairs"), p_value=None)
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if np.all(xs == xs[0]) or np.all(ys == ys[0]):
        return Spearman(n=n, rho=Undefined("one ordering is constant"), p_value=None)
    result = sps.spearmanr(xs, ys)
    return Spearman(n=n, rho=float(result.statistic), p_value=float(result.pvalue))
