"""Percentile bootstrap intervals for Fleiss' κ and Cohen's κ: items resampled with replacement
from ``numpy.random.default_rng(seed)`` (same data + same seed = same interval), the interval
the (1 − confidence)/2 and (1 + confidence)/2 percentiles of the resampled κ, resamples where κ
is undefined (one category only) left out and counted — the same method as α's and AC1's.

- :func:`fleiss_kappa_bootstrap_ci` — over the items labelled twice or more (κ depends on an
  item only through its count vector: one multinomial draw over the distinct count patterns).
- :func:`cohen_kappa_bootstrap_ci` — one pair of annotators over the items both labelled (one
  multinomial draw over the cells of their confusion table).
- :func:`mean_cohen_kappa_bootstrap_ci` — the mean of the pairs' κ, every pair recomputed on
  the same resample of the study's items.
"""

from __future__ import annotations

from annotation.agreement.alpha import BootstrapCI, count_patterns
from annotation.agreement.kappa import (
    cohen_kappa_from_confusion,
    fleiss_kappa_from_counts,
    shared_label_pairs,
)
from annotation.agreement.matrix import (
    NO_ITEM_TWICE,
    LabelMatrix,
    Undefined,
    check_pairable,
    pairable_counts,
)
from core.lazy import lazy_module

np = lazy_module("numpy")

# Floats held at once by one chunk of the mean pairwise κ's resamples (8 bytes each).
CHUNK_CELLS = 4_000_000
MULTINOMIAL_MAX_ITEMS = 20_000

ALL_DEGENERATE = "every bootstrap resample had one category only, so none gave a κ"


def _check(n_resamples: int, confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")


def kappa_of_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's κ of each k × k table in ``tables`` (… × k × k counts); ``nan`` where it is
    undefined (no items, or chance agreement 1)."""
    tables = np.asarray(tables, dtype=np.float64)
    total = tables.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = np.trace(tables, axis1=-2, axis2=-1) / total
        rows = tables.sum(axis=-1) / total[..., None]
        cols = tables.sum(axis=-2) / total[..., None]
        p_e = (rows * cols).sum(axis=-1)
        kappa = (p_o - p_e) / (1 - p_e)
    kappa[~(total > 0) | ~(p_e < 1 - 1e-12)] = np.nan
    return kappa


def fleiss_kappa_bootstrap_ci(
    counts: np.ndarray, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> BootstrapCI | Undefined:
    """Fleiss' κ's interval from an items × categories table of rating counts (items with fewer
    than two ratings left out, as the point estimate does)."""
    _check(n_resamples, confidence)
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts.sum(axis=1) >= 2] if counts.size else counts
    point = fleiss_kappa_from_counts(counts)
    if isinstance(point, Undefined):
        return point
    patterns, frequency = count_patterns(counts)
    n = int(frequency.sum())
    weights = np.random.default_rng(seed).multinomial(n, frequency / n, size=n_resamples)
    weights = weights.astype(np.float64)
    m = patterns.sum(axis=1).astype(np.float64)
    per_item = (patterns * (patterns - 1)).sum(axis=1) / (m * (m - 1))
    p_bar = weights @ per_item / n
    p_j = (weights @ patterns) / (weights @ m)[:, None]
    p_e = (p_j**2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(p_e < 1 - 1e-12, (p_bar - p_e) / (1 - p_e), np.nan)
    return BootstrapCI.from_samples(
        values, confidence=confidence, seed=seed, undefined=ALL_DEGENERATE
    )


def cohen_kappa_bootstrap_ci(
    table: np.ndarray, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> BootstrapCI | Undefined:
    """Cohen's κ's interval for one pair, from their k × k confusion table."""
    _check(n_resamples, confidence)
    table = np.asarray(table, dtype=np.int64)
    point = cohen_kappa_from_confusion(table)
    if isinstance(point, Undefined):
        return point
    cells = table.reshape(-1)
    n = int(cells.sum())
    draws = np.random.default_rng(seed).multinomial(n, cells / n, size=n_resamples)
    values = kappa_of_tables(draws.reshape(n_resamples, *table.shape))
    return BootstrapCI.from_samples(
        values, confidence=confidence, seed=seed, undefined=ALL_DEGENERATE
    )


def mean_cohen_kappa_bootstrap_ci(
    matrix: LabelMatrix, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> BootstrapCI | Undefined:
    """The interval of the mean pairwise Cohen's κ: the items labelled twice or more are
    resampled together, each pair's κ recomputed on its shared items in the resample, and the
    pairs with a defined κ averaged (as the point estimate)."""
    _check(n_resamples, confidence)
    undefined = check_pairable(matrix)
    if undefined:
        return undefined
    if not len(pairable_counts(matrix)):
        return Undefined(NO_ITEM_TWICE)
    pairable = matrix.subset(matrix.labels_per_item() >= 2)
    n, k = len(pairable.items), matrix.n_categories
    first, second = shared_label_pairs(pairable)
    item = pairable.rows[first]
    cols = len(matrix.annotators)
    _, pair = np.unique(pairable.cols[first] * cols + pairable.cols[second], return_inverse=True)
    n_pairs = int(pair.max()) + 1
    slot = pair * (k * k) + pairable.values[first] * k + pairable.values[second]
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    # Resamples in chunks, each chunk's pair tables one weighted bincount: memory stays
    # about CHUNK_CELLS floats whatever the number of resamples.
    chunk = max(1, min(n_resamples, CHUNK_CELLS // max(len(slot), n, 1)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        weights = _item_weights(rng, n, size)
        offsets = (np.arange(size) * (n_pairs * k * k))[:, None]
        tables = np.bincount(
            (slot[None, :] + offsets).ravel(),
            weights=weights[:, item].ravel(),
            minlength=size * n_pairs * k * k,
        ).reshape(size, n_pairs, k, k)
        kappa = kappa_of_tables(tables)
        defined = np.isfinite(kappa).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            values[start : start + size] = np.where(
                defined > 0, np.nansum(kappa, axis=1) / defined, np.nan
            )
    return BootstrapCI.from_samples(
        values, confidence=confidence, seed=seed, undefined=ALL_DEGENERATE
    )


def _item_weights(rng, n: int, size: int) -> np.ndarray:
    """``size`` resamples of ``n`` items with replacement, as how often each item is drawn
    (resamples × items): a uniform multinomial up to :data:`MULTINOMIAL_MAX_ITEMS` items, past
    that the same distribution drawn as ``n`` item indices per resample (faster when large)."""
    if n <= MULTINOMIAL_MAX_ITEMS:
        return rng.multinomial(n, np.full(n, 1 / n), size=size).astype(np.float64)
    draws = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)
