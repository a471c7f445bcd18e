"""Percentile bootstrap intervals over items, reproducible with a fixed seed.

Every function resamples *items* with replacement ``n_resamples`` times from
``numpy.random.default_rng(seed)``: the same data and seed always give the same interval.
The interval is the (1 − confidence)/2 and (1 + confidence)/2 percentiles of the statistic
over the resamples (numpy's linear interpolation). Resamples where the statistic is
undefined are left out and counted (``n_degenerate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotation.agreement import Undefined
from core.lazy import lazy_module

np = lazy_module("numpy")

METHOD = "percentile bootstrap over items (resampled with replacement, fixed seed)"
PAIRED_METHOD = (
    "paired percentile bootstrap over common items; p-value from the resampled differences "
    "shifted to the null (|d* − d| ≥ |d|)"
)


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int
    n_degenerate: int = 0
    method: str = METHOD

    def to_json(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "n_degenerate": self.n_degenerate,
            "seed": self.seed,
            "method": self.method,
        }


def _check(n_resamples: int, confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")


def percentile_interval(
    samples: np.ndarray,
    *,
    confidence: float,
    seed: int,
    method: str = METHOD,
) -> Interval | Undefined:
    """The percentile interval of bootstrap ``samples`` (``nan`` = undefined resample)."""
    samples = np.asarray(samples, dtype=np.float64)
    ok = np.isfinite(samples)
    if not ok.any():
        return Undefined("no bootstrap resample gave a value")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(samples[ok], [tail, 100 - tail])
    return Interval(
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_resamples=len(samples),
        seed=seed,
        n_degenerate=int((~ok).sum()),
        method=method,
    )


def resample_indices(n: int, *, n_resamples: int, seed: int) -> np.ndarray:
    """``n_resamples`` × ``n`` item indices drawn with replacement."""
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def bootstrap_mean_ci(
    values: Sequence[float],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval | Undefined:
    """CI of the mean of per-item ``values`` (a share when they are 0/1, e.g. How2Score)."""
    _check(n_resamples, confidence)
    x = np.asarray(values, dtype=np.float64)
    if not len(x):
        return Undefined("no items")
    means = x[resample_indices(len(x), n_resamples=n_resamples, seed=seed)].mean(axis=1)
    return percentile_interval(means, confidence=confidence, seed=seed)


def bootstrap_proportion_ci(
    k: int, n: int, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> Interval | Undefined:
    """CI of the share k/n: resampling n items of which k are successes is a binomial draw."""
    _check(n_resamples, confidence)
    if n <= 0:
        return Undefined("no items")
    draws = np.random.default_rng(seed).binomial(n, k / n, size=n_resamples) / n
    return percentile_interval(draws, confidence=confidence, seed=seed)


def bootstrap_cells(cells: Sequence[int], *, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Resampled counts (``n_resamples`` × cells) of a contingency table given as flat cell
    counts: resampling the n items with replacement is one multinomial draw over the cells."""
    cells = np.asarray(cells, dtype=np.int64)
    n = int(cells.sum())
    if n <= 0:
        raise ValueError("the table has no items")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, cells / n, size=n_resamples)


@dataclass(frozen=True)
class PairedDifference:
    """mean(a) − mean(b) on the same items, with its CI and a two-sided p-value."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    ci: Interval | Undefined
    p_value: float

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "difference": self.difference,
            "ci": self.ci.to_json(),
            "p_value": self.p_value,
        }


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference | Undefined:
    """Paired bootstrap of mean(a) − mean(b) over items scored for both (``a[i]``, ``b[i]``
    belong to the same item). p = (1 + #{|d* − d| ≥ |d|}) / (1 + B): how often a resample of
    the centred differences lands as far from 0 as the observed difference."""
    _check(n_resamples, confidence)
    xa, xb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape:
        raise ValueError("a and b must have the same length (one value per common item)")
    if not len(xa):
        return Undefined("no common items")
    d = xa - xb
    observed = float(d.mean())
    diffs = d[resample_indices(len(d), n_resamples=n_resamples, seed=seed)].mean(axis=1)
    extreme = int((np.abs(diffs - observed) >= abs(observed) - 1e-12).sum())
    return PairedDifference(
        n=len(d),
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        difference=observed,
        ci=percentile_interval(diffs, confidence=confidence, seed=seed, method=PAIRED_METHOD),
        p_value=(1 + extreme) / (1 + n_resamples),
    )
