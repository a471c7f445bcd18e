"""Gwet's AC1 (first-order agreement coefficient) and its bootstrap confidence interval.

AC1 corrects agreement for chance like κ, but its chance term stays small when one category
dominates, so it does not collapse when, say, 80% of items are ``no_failure`` (the "κ
paradox"). Multi-rater form with missing ratings, as in Gwet, *Handbook of Inter-Rater
Reliability* (4th ed., 2014, ch. 2) and Gwet (2008, BJMSP 61:29–48):

- p_a = mean over items rated by r_i ≥ 2 raters of Σ_k r_ik (r_ik − 1) / (r_i (r_i − 1));
- π_k = mean over items rated at least once of r_ik / r_i;
- p_e = Σ_k π_k (1 − π_k) / (q − 1), q the number of categories;
- AC1 = (p_a − p_e) / (1 − p_e).

With two raters on a 2×2 table this is Gwet's two-rater AC1. Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.agreement.alpha import BootstrapCI, count_patterns
from annotation.agreement.matrix import (
    NO_ITEM_TWICE,
    NO_LABELS,
    LabelMatrix,
    Stat,
    Undefined,
    check_pairable,
)
from core.lazy import lazy_module

np = lazy_module("numpy")

ONE_CATEGORY_DECLARED = "AC1 needs at least two categories"


@dataclass(frozen=True)
class AC1Parts:
    """AC1 with its two ingredients (``pa`` observed, ``pe`` chance agreement)."""

    value: float
    pa: float
    pe: float


def ac1_weighted(
    patterns: np.ndarray, weights: np.ndarray, n_categories: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(AC1, p_a, p_e) per row of ``weights`` (resamples × patterns) over count patterns."""
    r = patterns.sum(axis=1).astype(np.float64)
    rated = r >= 1
    pairable = r >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = np.where(pairable, (patterns * (patterns - 1)).sum(axis=1) / (r * (r - 1)), 0.0)
        share = np.where(rated[:, None], patterns / r[:, None], 0.0)
        n_pairable = weights @ pairable.astype(np.float64)
        n_rated = weights @ rated.astype(np.float64)
        pa = (weights @ agree) / n_pairable
        pi = (weights @ share) / n_rated[:, None]
        pe = (pi * (1 - pi)).sum(axis=1) / (n_categories - 1)
        value = (pa - pe) / (1 - pe)
    bad = ~(n_pairable > 0) | ~(pe < 1)
    value[bad] = np.nan
    return value, pa, pe


def gwet_ac1_from_counts(
    counts: np.ndarray, n_categories: int | None = None
) -> AC1Parts | Undefined:
    """AC1 from an items × categories table of rating counts (r_ik).

    ``n_categories`` (q) defaults to the table's width: the categories a rater *could* choose,
    not only those used — AC1's chance term depends on q.
    """
    counts = np.asarray(counts, dtype=np.int64)
    q = counts.shape[1] if n_categories is None else n_categories
    if q < 2:
        return Undefined(ONE_CATEGORY_DECLARED)
    if not counts.size or counts.sum() == 0:
        return Undefined(NO_LABELS)
    if not (counts.sum(axis=1) >= 2).any():
        return Undefined(NO_ITEM_TWICE)
    patterns, frequency = count_patterns(counts)
    value, pa, pe = ac1_weighted(patterns, frequency[None, :].astype(np.float64), q)
    return AC1Parts(value=float(value[0]), pa=float(pa[0]), pe=float(pe[0]))


def gwet_ac1(matrix: LabelMatrix) -> Stat:
    """Gwet's AC1 of a label matrix (any number of raters, missing labels allowed).

    1 perfect agreement, 0 chance level. Unlike κ and α it stays high when nearly every label
    is the same category and the raters agree on it, which is why it is reported beside them
    for skewed labels such as ``has_failure`` / ``no_failure``.
    """
    undefined = check_pairable(matrix)
    if undefined:
        return undefined
    parts = gwet_ac1_from_counts(matrix.value_counts(), max(matrix.n_categories, 2))
    return parts if isinstance(parts, Undefined) else parts.value


def ac1_bootstrap_ci(
    counts: np.ndarray,
    *,
    n_categories: int | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI | Undefined:
    """Percentile bootstrap interval for AC1: items resampled with replacement (fixed ``seed``;
    same data + same seed = same interval). AC1 depends on an item only through its count
    vector, so a resample is one multinomial draw over the distinct count patterns."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    counts = np.asarray(counts, dtype=np.int64)
    q = counts.shape[1] if n_categories is None else n_categories
    point = gwet_ac1_from_counts(counts, q)
    if isinstance(point, Undefined):
        return point
    counts = counts[counts.sum(axis=1) >= 1]
    patterns, frequency = count_patterns(counts)
    n_units = int(frequency.sum())
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_units, frequency / n_units, size=n_resamples)
    values, _, _ = ac1_weighted(patterns, weights.astype(np.float64), q)
    return BootstrapCI.from_samples(
        values,
        confidence=confidence,
        seed=seed,
        undefined="no bootstrap resample had an item rated twice",
    )
