"""Krippendorff's α and its bootstrap confidence interval.

:func:`krippendorff_alpha` is computed by the ``krippendorff`` package from the items' value
counts; :func:`alpha_bootstrap_ci` resamples items with every resample's α computed at once
(items grouped by their pattern of category counts, one matrix product per resample).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from annotation.agreement.matrix import (
    ONE_CATEGORY,
    LabelMatrix,
    Stat,
    Undefined,
    check_pairable,
    pairable_counts,
)
from core.lazy import lazy_module

krippendorff = lazy_module("krippendorff")
np = lazy_module("numpy")

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(matrix: LabelMatrix, *, level: Level = "nominal") -> Stat:
    """Krippendorff's α: 1 − observed disagreement / disagreement expected by chance.

    Computed by the ``krippendorff`` package from the items' value counts. Works with any
    number of annotators and missing labels (items labelled once are not pairable and are
    ignored). 1 = perfect agreement, 0 = no better than chance, < 0 = systematic
    disagreement; Krippendorff suggests α ≥ 0.8 for firm conclusions and 0.667 as the lowest
    for tentative ones. ``level``: ``nominal`` (categories: the critical-failure label, the
    first-failure location), ``ordinal`` (ranked categories in ``matrix.categories`` order),
    ``interval`` or ``ratio`` (numeric labels).
    """
    undefined = _alpha_undefined(matrix, level)
    if undefined:
        return undefined
    counts = pairable_counts(matrix)
    domain = _value_domain(matrix, level)
    value = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    return float(value)


def _alpha_undefined(matrix: LabelMatrix, level: str) -> Undefined | None:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    undefined = check_pairable(matrix)
    if undefined:
        return undefined
    if int((pairable_counts(matrix).sum(axis=0) > 0).sum()) < 2:
        return Undefined(ONE_CATEGORY)
    return None


def count_patterns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an items × categories count table and how often each occurs."""
    base = int(counts.max()) + 1 if counts.size else 1
    if counts.shape[1] * np.log2(base) < 62:
        keys = counts @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        _, first, frequency = np.unique(keys, return_index=True, return_counts=True)
        return counts[first], frequency
    return np.unique(counts, axis=0, return_counts=True)


def _value_domain(matrix: LabelMatrix, level: str) -> np.ndarray:
    if level in ("interval", "ratio"):
        try:
            return np.asarray([float(c) for c in matrix.categories], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{level} level needs numeric labels; got {[str(c) for c in matrix.categories]}"
            ) from None
    return np.arange(matrix.n_categories)


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap interval for α."""

    low: float
    high: float
    confidence: float
    n_resamples: int
    n_degenerate: int  # resamples where α was undefined (one category only), left out
    seed: int

    @classmethod
    def from_samples(
        cls, values: np.ndarray, *, confidence: float, seed: int, undefined: str
    ) -> BootstrapCI | Undefined:
        """The percentile interval of the resamples' ``values`` (``nan``: undefined there,
        left out and counted); ``Undefined(undefined)`` when no resample had a value."""
        ok = np.isfinite(values)
        if not ok.any():
            return Undefined(undefined)
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(values[ok], [tail, 100 - tail])
        return cls(
            low=float(low),
            high=float(high),
            confidence=confidence,
            n_resamples=len(values),
            n_degenerate=int((~ok).sum()),
            seed=seed,
        )


def alpha_bootstrap_ci(
    matrix: LabelMatrix,
    *,
    level: Level = "nominal",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI | Undefined:
    """Percentile bootstrap confidence interval for Krippendorff's α.

    Method: the items (units) are resampled with replacement, ``n_resamples`` times, with a
    fixed ``seed`` (same data + same seed = same interval); α is recomputed on each resample
    and the interval is the (1−confidence)/2 and (1+confidence)/2 percentiles. Resamples
    where α is undefined (all pairable labels in one category) are left out and counted.

    Vectorised: α depends on an item only through its vector of category counts, so items
    are grouped by that pattern and a resample is a multinomial draw of pattern counts
    (exactly the distribution of resampling items); every resample's coincidence matrix is
    then one matrix product. Read it as the range of α values the same annotators would
    plausibly produce on another sample of items of this kind.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    undefined = _alpha_undefined(matrix, level)
    if undefined:
        return undefined
    patterns, frequency = count_patterns(pairable_counts(matrix))
    n_units = int(frequency.sum())
    rng = np.random.default_rng(seed)
    # Same distribution either way; the cheaper draw: B·P binomials or B·N unit indices.
    if len(patterns) <= max(n_units // 2, 1):
        weights = rng.multinomial(n_units, frequency / n_units, size=n_resamples)
    else:
        pattern_of_unit = np.repeat(np.arange(len(patterns)), frequency)
        draws = pattern_of_unit[rng.integers(0, n_units, size=(n_resamples, n_units))]
        offsets = (np.arange(n_resamples) * len(patterns))[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=n_resamples * len(patterns))
        weights = weights.reshape(n_resamples, len(patterns))
    alphas = _alpha_from_pattern_weights(
        patterns, weights.astype(np.float64), level=level, domain=_value_domain(matrix, level)
    )
    return BootstrapCI.from_samples(
        alphas,
        confidence=confidence,
        seed=seed,
        undefined="every bootstrap resample had a single category",
    )


def _alpha_from_pattern_weights(
    patterns: np.ndarray, weights: np.ndarray, *, level: str, domain: np.ndarray
) -> np.ndarray:
    """α for each row of ``weights`` (resamples × patterns); ``nan`` where undefined."""
    m = patterns.sum(axis=1).astype(np.float64)  # labels per pattern, all ≥ 2
    n_v = weights @ patterns  # resamples × categories: pairable values per category
    n = n_v.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if level == "nominal":
            # Observed: off-diagonal coincidences = m − Σ c(c−1)/(m−1) per unit.
            within = m - (patterns * (patterns - 1)).sum(axis=1) / (m - 1)
            d_o = weights @ within
            d_e = (n**2 - (n_v**2).sum(axis=1)) / (n - 1)
        else:
            per_unit = (
                patterns[:, :, None] * patterns[:, None, :]
                - patterns[:, :, None] * np.eye(patterns.shape[1])[None]
            ) / (m - 1)[:, None, None]
            o = np.einsum("bp,pij->bij", weights, per_unit)
            e = (
                n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(n_v.shape[1])[None]
            ) / (n - 1)[:, None, None]
            if level == "interval":
                d = ((domain[:, None] - domain[None, :]) ** 2)[None]
            elif level == "ratio":
                total = domain[:, None] + domain[None, :]
                diff = domain[:, None] - domain[None, :]
                ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
                d = (ratio**2)[None]
            else:  # ordinal: squared rank-sum distance that depends on the marginals
                prefix = np.concatenate(
                    [np.zeros((n_v.shape[0], 1)), np.cumsum(n_v, axis=1)], axis=1
                )
                idx = np.arange(n_v.shape[1])
                lo = np.minimum(idx[:, None], idx[None, :])
                hi = np.maximum(idx[:, None], idx[None, :])
                between = prefix[:, hi + 1] - prefix[:, lo]
                d = (between - (n_v[:, lo] + n_v[:, hi]) / 2) ** 2
            d_o = (o * d).sum(axis=(1, 2))
            d_e = (e * d).sum(axis=(1, 2))
        alphas = 1 - d_o / d_e
    alphas[~(d_e > 0)] = np.nan
    return alphas
