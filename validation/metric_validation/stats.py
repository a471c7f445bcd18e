"""An automatic metric against human judgments of the same outputs (seed 004 §4.3, notes §4.6),
each statistic with a percentile bootstrap CI over items (:mod:`judging.stats.bootstrap`).
Pure: no Django.

- :func:`metric_kappa`: Cohen's κ between the metric, discretised by a stated rule, and the
  mean human rating rounded to the nearest scale point (halves up). Rules: ``thresholds`` (cut
  points t1 < … < tk: category = how many cuts are ≤ the value, so k cuts give k + 1
  categories mapped onto the scale's points from the lowest) or ``quantiles`` (as many bins
  as the scale has points, cut at the metric's own quantiles over the items, so each bin holds
  about the same number of items). The paper does not say how it discretised ([FLAG] notes
  §4.3); the rule is always reported with the cuts used. κ itself is
  :func:`annotation.agreement.cohen_kappa_from_confusion` (one home).
- :func:`critical_detector`: the metric as a detector of human-flagged critical errors (the
  human majority per item): AUC (Mann–Whitney, ties ½), and precision / recall at a threshold,
  chosen or the midpoint between the two groups' mean scores (the paper's "midpoint between
  the two distributions"). ``direction="low"`` (default: a low score predicts an error, as
  SCORE) flags ``score < threshold``; ``"high"`` flags ``score > threshold``. The threshold
  is fixed from all items; the CIs resample items at that threshold.
- :func:`pairwise_agreement`: per pair of outputs, the metric prefers the one it scores higher
  (equal: a tie); % agreement is the share of pairs with a human preference (not a tie) where
  the metric prefers the same output, and Kendall's τ-b compares the two orderings over all
  pairs (concordant C, discordant D, ties of only the metric T_m or only the humans T_h:
  τ = (C − D) / √((C + D + T_m)(C + D + T_h)); pairs tied on both sides are left out).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from annotation.agreement import Undefined, cohen_kappa_from_confusion, stat_json
from core.lazy import lazy_module
from judging.stats.bootstrap import percentile_interval, resample_indices

np = lazy_module("numpy")
sps = lazy_module("scipy.stats")

RULES = ("thresholds", "quantiles")
DIRECTIONS = ("low", "high")


def _check_options(n_resamples: int, confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 0:
        raise ValueError("the number of bootstrap resamples cannot be negative")


def _ci(samples: np.ndarray, confidence: float, seed: int) -> dict[str, Any]:
    interval = percentile_interval(samples, confidence=confidence, seed=seed)
    return interval.to_json()


def _with_ci(value: float | Undefined, samples, confidence: float, seed: int) -> dict[str, Any]:
    out = stat_json(value)
    if samples is not None and out["value"] is not None:
        out["ci"] = _ci(samples, confidence, seed)
    return out


def round_half_up(x: float) -> int:
    """The nearest whole number, halves up (2.5 → 3): the mean rating's scale point."""
    return math.floor(x + 0.5)


# --- Cohen's κ: metric (discretised) vs mean rating ------------------------------------------


def discretise_cuts(values: Sequence[float], *, rule: str, cuts=None, n_bins: int) -> list[float]:
    """The cut points of a rule: the given ``cuts`` (``thresholds``, strictly increasing,
    ``n_bins − 1`` of them) or the metric's own quantiles at 1/n … (n−1)/n (``quantiles``)."""
    if rule == "thresholds":
        if not cuts or any(not isinstance(c, int | float) or isinstance(c, bool) for c in cuts):
            raise ValueError("thresholds: give the cut points as numbers")
        cuts = [float(c) for c in cuts]
        if any(b <= a for a, b in itertools.pairwise(cuts)):
            raise ValueError("thresholds: the cut points must increase")
        if len(cuts) != n_bins - 1:
            raise ValueError(
                f"thresholds: {len(cuts)} cut point(s) give {len(cuts) + 1} categories; the "
                f"rating scale has {n_bins} points, so give {n_bins - 1}"
            )
        return cuts
    if rule == "quantiles":
        qs = [k / n_bins for k in range(1, n_bins)]
        return [float(q) for q in np.quantile(np.asarray(values, dtype=np.float64), qs)]
    raise ValueError(f"rule must be one of {', '.join(RULES)}")


def discretise(values: Sequence[float], cuts: Sequence[float]) -> np.ndarray:
    """Category of each value: the number of cut points ≤ it (0 … len(cuts))."""
    return np.searchsorted(np.asarray(cuts, dtype=np.float64), values, side="right")


def metric_kappa(
    metric: Sequence[float],
    mean_ratings: Sequence[float],
    *,
    scale: Sequence[int],
    rule: str = "quantiles",
    cuts: Sequence[float] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """κ between the discretised metric and the rounded mean rating on the rating ``scale``
    (its points in order, e.g. 0–4), per item (the two sequences align)."""
    _check_options(n_resamples, confidence)
    if len(metric) != len(mean_ratings):
        raise ValueError("metric and ratings must have one value per item")
    scale = list(scale)
    n_cat = len(scale)
    if n_cat < 2:
        raise ValueError("the rating scale needs at least two points")
    used = discretise_cuts(metric, rule=rule, cuts=cuts, n_bins=n_cat) if len(metric) else []
    m_codes = discretise(metric, used)
    h_codes = np.array(
        [min(max(round_half_up(r) - scale[0], 0), n_cat - 1) for r in mean_ratings], dtype=np.int64
    )
    out: dict[str, Any] = {"n": len(metric), "rule": rule, "cuts": used, "scale": scale}
    if not len(metric):
        out["kappa"] = Undefined("no item has both a metric value and ratings").to_json()
        return out
    flat = m_codes * n_cat + h_codes
    table = np.bincount(flat, minlength=n_cat * n_cat).reshape(n_cat, n_cat)
    out["confusion"] = table.tolist()  # rows: metric category, columns: rounded mean rating
    samples = None
    if n_resamples:
        idx = resample_indices(len(flat), n_resamples=n_resamples, seed=seed)
        samples = np.array(
            [
                _kappa_value(np.bincount(flat[row], minlength=n_cat * n_cat).reshape(n_cat, n_cat))
                for row in idx
            ]
        )
    out["kappa"] = _with_ci(cohen_kappa_from_confusion(table), samples, confidence, seed)
    return out


def _kappa_value(table: np.ndarray) -> float:
    value = cohen_kappa_from_confusion(table)
    return float("nan") if isinstance(value, Undefined) else float(value)


# --- a score as a detector of critical errors -------------------------------------------------


def auc(scores: np.ndarray, flagged: np.ndarray, *, direction: str = "low") -> float:
    """P(a flagged item scores lower than an unflagged one) + ½ P(equal) (``low``; ``high``:
    higher), by ranks (Mann–Whitney U / (n_flagged · n_unflagged), ties at mid-rank), so
    O(n log n). NaN when either group is empty."""
    n_pos = int(flagged.sum())
    n_neg = len(scores) - n_pos
    if not n_pos or not n_neg:
        return float("nan")
    ranks = sps.rankdata(-scores if direction == "low" else scores)
    u = ranks[flagged].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def _precision_recall(predicted: np.ndarray, flagged: np.ndarray) -> tuple[float, float]:
    tp = float((predicted & flagged).sum())
    n_pred, n_flag = float(predicted.sum()), float(flagged.sum())
    return (tp / n_pred if n_pred else float("nan"), tp / n_flag if n_flag else float("nan"))


def critical_detector(
    scores: Sequence[float],
    flagged: Sequence[bool],
    *,
    threshold: float | None = None,
    direction: str = "low",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """AUC, precision and recall of ``scores`` as a detector of ``flagged`` items (module
    docstring); ``threshold`` None: the midpoint of the two groups' mean scores."""
    _check_options(n_resamples, confidence)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}")
    if len(scores) != len(flagged):
        raise ValueError("scores and flags must have one value per item")
    s = np.asarray(scores, dtype=np.float64)
    f = np.asarray(flagged, dtype=bool)
    n_flagged = int(f.sum())
    out: dict[str, Any] = {
        "n": len(s),
        "n_flagged": n_flagged,
        "direction": direction,
        "mean_flagged": float(s[f].mean()) if n_flagged else None,
        "mean_unflagged": float(s[~f].mean()) if len(s) - n_flagged else None,
    }
    if threshold is None:
        if out["mean_flagged"] is None or out["mean_unflagged"] is None:
            out["threshold"] = None
            out["threshold_rule"] = "midpoint (one group is empty)"
        else:
            out["threshold"] = (out["mean_flagged"] + out["mean_unflagged"]) / 2
            out["threshold_rule"] = "midpoint of the two groups' mean scores"
    else:
        out["threshold"] = float(threshold)
        out["threshold_rule"] = "chosen"
    t = out["threshold"]

    def stats(idx: np.ndarray | slice) -> tuple[float, float, float]:
        ss, ff = s[idx], f[idx]
        a = auc(ss, ff, direction=direction)
        if t is None:
            return a, float("nan"), float("nan")
        predicted = ss < t if direction == "low" else ss > t
        return (a, *_precision_recall(predicted, ff))

    values = stats(slice(None))
    if t is not None:
        predicted = s < t if direction == "low" else s > t
        out["confusion"] = {
            "true_positive": int((predicted & f).sum()),
            "false_positive": int((predicted & ~f).sum()),
            "false_negative": int((~predicted & f).sum()),
            "true_negative": int((~predicted & ~f).sum()),
        }
    draws = None
    if n_resamples and len(s):
        idx = resample_indices(len(s), n_resamples=n_resamples, seed=seed)
        draws = np.array([stats(row) for row in idx])
    reasons = ("needs flagged and unflagged items", "no item predicted", "no item flagged")
    for k, name in enumerate(("auc", "precision", "recall")):
        value = values[k] if math.isfinite(values[k]) else Undefined(reasons[k])
        if t is None and name != "auc":
            value = Undefined("no threshold: one group is empty")
        out[name] = _with_ci(value, None if draws is None else draws[:, k], confidence, seed)
    return out


# --- pairwise preferences ---------------------------------------------------------------------


def _sign(x: float) -> int:
    return int(x > 0) - int(x < 0)


def pairwise_agreement(
    pairs: Sequence[tuple[float, float, str]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """``pairs``: (metric of the first output, metric of the second, the human preference
    ``first`` | ``second`` | ``tie``). % agreement and Kendall's τ-b (module docstring)."""
    _check_options(n_resamples, confidence)
    human_sign = {"first": 1, "second": -1, "tie": 0}
    rows = []
    for a, b, pref in pairs:
        if pref not in human_sign:
            raise ValueError(f"a preference must be first, second or tie, got {pref!r}")
        rows.append((_sign(float(a) - float(b)), human_sign[pref]))
    m = np.array([r[0] for r in rows], dtype=np.int64)
    h = np.array([r[1] for r in rows], dtype=np.int64)
    out: dict[str, Any] = {
        "n_pairs": len(rows),
        "n_human_ties": int((h == 0).sum()),
        "n_metric_ties": int((m == 0).sum()),
    }

    def stats(mm: np.ndarray, hh: np.ndarray) -> tuple[float, float]:
        decided = hh != 0
        agree = float((mm[decided] == hh[decided]).mean()) if decided.any() else float("nan")
        c = float(((mm * hh) > 0).sum())
        d = float(((mm * hh) < 0).sum())
        t_m = float(((mm == 0) & (hh != 0)).sum())
        t_h = float(((hh == 0) & (mm != 0)).sum())
        denom = math.sqrt((c + d + t_m) * (c + d + t_h))
        return agree, ((c - d) / denom if denom else float("nan"))

    values = stats(m, h)
    draws = None
    if n_resamples and len(rows):
        idx = resample_indices(len(rows), n_resamples=n_resamples, seed=seed)
        draws = np.array([stats(m[row], h[row]) for row in idx])
    reasons = ("no pair with a human preference", "every pair tied")
    for k, name in enumerate(("agreement", "kendall_tau")):
        value = values[k] if math.isfinite(values[k]) else Undefined(reasons[k])
        out[name] = _with_ci(value, None if draws is None else draws[:, k], confidence, seed)
    return out


def majority_preference(votes: Sequence[str]) -> str:
    """The pair's human preference: the most chosen of first / second / tie; a draw between
    first and second is a tie."""
    counts = {p: sum(1 for v in votes if v == p) for p in ("first", "second", "tie")}
    if counts["first"] > counts["second"] and counts["first"] >= counts["tie"]:
        return "first"
    if counts["second"] > counts["first"] and counts["second"] >= counts["tie"]:
        return "second"
    return "tie"


def mean_ratings(ratings: Mapping[Any, Sequence[float]]) -> dict[Any, float]:
    """Mean of each item's ratings (items without one are left out)."""
    return {k: sum(v) / len(v) for k, v in ratings.items() if v}
