"""Calibration of a judge sampled k times (decoding seeds) against the human majority. Pure:
numpy, no Django.

Per item the judge's *confidence* that the candidate has a critical failure is its vote share
``p`` = (samples saying ``has_failure``) / (samples that parsed); the outcome ``y`` is the human
majority (1 = has_failure). Items whose majority is tied, or with no parsed sample, are left
out by the caller.

- Brier score (Brier 1950): mean of (p − y)²; 0 is perfect, 0.25 is a constant p = 0.5.
- Expected calibration error (Naeini et al. 2015; Guo et al. 2017): the items are put in
  ``n_bins`` equal-width bins of p — bin b holds b/M ≤ p < (b+1)/M, the last bin also p = 1 —
  and ECE = Σ_b (n_b / n) · |ȳ_b − p̄_b|, the gap between the observed failure rate and the
  mean confidence in each bin, weighted by the bin's share of items. 0 is perfectly calibrated.
- The reliability diagram plots (p̄_b, ȳ_b) per non-empty bin against the diagonal.

Both get a percentile bootstrap CI over items (:mod:`judging.stats.bootstrap`, fixed seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.agreement import Undefined, stat_json
from core.lazy import lazy_module
from judging.stats.bootstrap import percentile_interval, resample_indices

np = lazy_module("numpy")

DEFAULT_BINS = 10
NO_ITEMS = "no item has both a clear human majority and a parsed judge sample"


def _arrays(p: Sequence[float], y: Sequence[int | bool]) -> tuple[np.ndarray, np.ndarray]:
    probs = np.asarray(p, dtype=np.float64)
    outcomes = np.asarray(y, dtype=np.float64)
    if probs.shape != outcomes.shape or probs.ndim != 1:
        raise ValueError("p and y must be flat sequences of the same length")
    if len(probs) and (probs.min() < 0 or probs.max() > 1 or not np.isfinite(probs).all()):
        raise ValueError("every p must be a probability between 0 and 1")
    if len(outcomes) and not np.isin(outcomes, (0.0, 1.0)).all():
        raise ValueError("every y must be 0 or 1")
    return probs, outcomes


def bin_index(p: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin of each p: ⌊p·M⌋ (a hair of tolerance so 0.3·10 lands in bin 3), p = 1 in the
    last bin."""
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    return np.minimum(np.floor(np.asarray(p) * n_bins + 1e-9).astype(np.int64), n_bins - 1)


def brier_score(p: Sequence[float], y: Sequence[int | bool]) -> float | Undefined:
    probs, outcomes = _arrays(p, y)
    if not len(probs):
        return Undefined(NO_ITEMS)
    return float(np.mean((probs - outcomes) ** 2))


def _ece_rows(probs: np.ndarray, outcomes: np.ndarray, n_bins: int, weights: np.ndarray) -> float:
    """ECE of every row of ``weights`` (resamples × items: how often each item was drawn)."""
    index = bin_index(probs, n_bins)
    onehot = np.zeros((len(probs), n_bins))
    onehot[np.arange(len(probs)), index] = 1.0
    n_b = weights @ onehot
    p_b = weights @ (onehot * probs[:, None])
    y_b = weights @ (onehot * outcomes[:, None])
    total = n_b.sum(axis=1)
    return np.abs(y_b - p_b).sum(axis=1) / total


def expected_calibration_error(
    p: Sequence[float], y: Sequence[int | bool], *, n_bins: int = DEFAULT_BINS
) -> float | Undefined:
    probs, outcomes = _arrays(p, y)
    if not len(probs):
        return Undefined(NO_ITEMS)
    return float(_ece_rows(probs, outcomes, n_bins, np.ones((1, len(probs))))[0])


def reliability_bins(
    p: Sequence[float], y: Sequence[int | bool], *, n_bins: int = DEFAULT_BINS
) -> list[dict[str, Any]]:
    """Every bin: its bounds, items, mean confidence and observed failure rate (``None`` for an
    empty bin, with ``n`` 0)."""
    probs, outcomes = _arrays(p, y)
    index = bin_index(probs, n_bins) if len(probs) else np.array([], dtype=np.int64)
    out = []
    for b in range(n_bins):
        mine = index == b
        n = int(mine.sum())
        out.append(
            {
                "low": b / n_bins,
                "high": (b + 1) / n_bins,
                "n": n,
                "mean_confidence": float(probs[mine].mean()) if n else None,
                "observed_rate": float(outcomes[mine].mean()) if n else None,
            }
        )
    return out


def calibration_report(
    p: Sequence[float],
    y: Sequence[int | bool],
    *,
    n_bins: int = DEFAULT_BINS,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """ECE and Brier score (each ``{"value", "ci"}`` or ``{"value": null, "undefined"}``), the
    reliability bins, and what went in."""
    probs, outcomes = _arrays(p, y)
    n = len(probs)
    ece = expected_calibration_error(probs, outcomes, n_bins=n_bins)
    brier = brier_score(probs, outcomes)
    out: dict[str, Any] = {
        "n_items": n,
        "n_bins": n_bins,
        "bins": reliability_bins(probs, outcomes, n_bins=n_bins),
        "ece": stat_json(ece),
        "brier": stat_json(brier),
        "mean_confidence": float(probs.mean()) if n else None,
        "observed_rate": float(outcomes.mean()) if n else None,
    }
    if n and n_resamples > 0:
        draws = resample_indices(n, n_resamples=n_resamples, seed=seed)
        weights = np.zeros((n_resamples, n))
        np.add.at(weights, (np.arange(n_resamples)[:, None], draws), 1.0)
        out["ece"]["ci"] = percentile_interval(
            _ece_rows(probs, outcomes, n_bins, weights), confidence=confidence, seed=seed
        ).to_json()
        briers = ((probs[draws] - outcomes[draws]) ** 2).mean(axis=1)
        out["brier"]["ci"] = percentile_interval(briers, confidence=confidence, seed=seed).to_json()
    return out


def vote_share(votes: Sequence[bool | None]) -> float | None:
    """The share of parsed samples saying ``has_failure`` (``None`` samples did not parse);
    ``None`` when no sample parsed."""
    parsed = [v for v in votes if v is not None]
    if not parsed:
        return None
    return sum(1 for v in parsed if v) / len(parsed)
