"""Escalate what the judge cannot decide: a threshold on the judge's confidence above which it
decides alone, with a guarantee of agreement with people. Pure: numpy and scipy, no Django.

The method is the fixed-sequence test of *Trust or Escalate: LLM Judges with Provable
Guarantees for Human Agreement* (Jung, Brahman & Choi, ICLR 2025). On calibration items, each
with the judge's confidence ``c_i`` and whether the judge agreed with the human majority, the
thresholds λ are the distinct confidences, scanned from the most confident down. At each λ the
items with ``c ≥ λ`` are the ones the judge would decide; with ``n(λ)`` of them and ``k(λ)``
disagreements the exact binomial p-value of the null "the judge's disagreement rate on those
items is above α" is

    p(λ) = P(Binomial(n(λ), α) ≤ k(λ))        (scipy.stats.binom.cdf)

λ keeps going down while ``p(λ) ≤ δ`` and the scan stops at the first λ that fails; the chosen
threshold is the last that passed. Because the order is fixed before the labels are looked at,
no multiple-testing correction is needed, and the judge's agreement with people on the items it
decides (``c ≥ λ``, new items from the same population) is at least ``1 − α`` with probability
at least ``1 − δ`` over the draw of the calibration items.

Ties: every item sharing a confidence is decided or escalated together (one test per distinct
confidence, rounded to :data:`TIE_DECIMALS` decimals). Scanning the distinct observed values is
the same as scanning a fine fixed grid: thresholds between two observed values select the same
items. If even the most confident group fails, no threshold passes and the judge decides
nothing. A group of ``n`` items with no disagreement passes only if ``(1 − α)^n ≤ δ``, so fewer
than :func:`min_items` calibration items can never pass and are refused.

The judge's confidence comes from ``k`` samples of the judge (:func:`vote_confidence`: the vote
share ``p`` for ``has_failure`` gives the answer of the majority and the confidence
``max(p, 1 − p)``, the paper's simulated annotators) or is one it states (any number in [0, 1]).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.lazy import lazy_module

np = lazy_module("numpy")
sps = lazy_module("scipy.stats")

DEFAULT_ALPHA = 0.1
DEFAULT_DELTA = 0.1
TIE_DECIMALS = 9


class EscalationError(ValueError):
    """Inputs no threshold can be calibrated from; ``field`` names the input at fault
    (``alpha``, ``delta``, ``confidence``, ``agreed`` or ``items``)."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def check_levels(alpha: Any, delta: Any) -> tuple[float, float]:
    """α (the disagreement the judge may have on what it decides) and δ (the chance the
    guarantee fails), each a number strictly between 0 and 1."""
    out = []
    for name, value, meaning in (
        ("alpha", alpha, "the disagreement rate the judge may have on the items it decides"),
        ("delta", delta, "the chance that the guarantee does not hold"),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise EscalationError(name, f"{name} must be a number between 0 and 1 ({meaning})")
        value = float(value)
        if not math.isfinite(value) or not 0 < value < 1:
            raise EscalationError(
                name, f"{name} must be strictly between 0 and 1 ({meaning}); got {value:g}"
            )
        out.append(value)
    return out[0], out[1]


def min_items(alpha: float, delta: float) -> int:
    """The fewest items a threshold needs to pass at all: the smallest ``n`` with
    ``(1 − α)^n ≤ δ`` (every one of them agreeing with people)."""
    alpha, delta = check_levels(alpha, delta)
    n = max(1, math.ceil(math.log(delta) / math.log1p(-alpha)))
    while n > 1 and (1 - alpha) ** (n - 1) <= delta:  # floating point at an exact power
        n -= 1
    while (1 - alpha) ** n > delta:
        n += 1
    return n


def vote_confidence(votes: Sequence[bool | None]) -> tuple[bool | None, float | None]:
    """The judge's answer and confidence from its samples' votes (``None``: did not parse):
    the vote share ``p`` saying ``has_failure`` answers ``p > ½`` with confidence
    ``max(p, 1 − p)``; a tie (``p = ½``) has no answer of its own (the caller falls back on the
    judgment's verdict); ``(None, None)`` when no sample parsed."""
    parsed = [bool(v) for v in votes if v is not None]
    if not parsed:
        return None, None
    p = sum(parsed) / len(parsed)
    answer = None if p == 0.5 else p > 0.5
    return answer, max(p, 1 - p)


@dataclass(frozen=True)
class Step:
    """One threshold of the scan: the items at or above it, their disagreements, the
    empirical disagreement rate, the binomial p-value and whether it passed (p ≤ δ)."""

    threshold: float
    n: int
    n_disagree: int
    risk: float
    p_value: float
    passed: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "n": self.n,
            "n_disagree": self.n_disagree,
            "risk": self.risk,
            "p_value": self.p_value,
            "passed": self.passed,
        }


@dataclass(frozen=True)
class Calibration:
    """The calibrated threshold (``None``: the judge decides nothing), how many calibration
    items it decides, and the scan that chose it (up to and including the first failure)."""

    alpha: float
    delta: float
    n_calibration: int
    threshold: float | None
    n_decided: int
    steps: tuple[Step, ...] = field(default=())

    @property
    def guaranteed_agreement(self) -> float:
        return 1 - self.alpha

    @property
    def share_decided(self) -> float:
        return self.n_decided / self.n_calibration if self.n_calibration else 0.0

    @property
    def decides_nothing(self) -> bool:
        return self.threshold is None

    def decides(self, confidence: float | None) -> bool:
        """Whether the judge decides an item of this confidence alone (no confidence: no)."""
        if self.threshold is None or confidence is None:
            return False
        return round(float(confidence), TIE_DECIMALS) >= self.threshold

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "delta": self.delta,
            "guaranteed_agreement": self.guaranteed_agreement,
            "n_calibration": self.n_calibration,
            "threshold": self.threshold,
            "n_decided": self.n_decided,
            "share_decided": self.share_decided,
            "decides_nothing": self.decides_nothing,
            "steps": [s.to_json() for s in self.steps],
        }


def _arrays(confidence: Sequence[float], agreed: Sequence[bool | int]):
    c = np.asarray(confidence, dtype=np.float64)
    a = np.asarray(agreed)
    if c.ndim != 1 or a.ndim != 1 or c.shape != a.shape:
        raise EscalationError(
            "agreed", "confidence and agreed must be flat sequences of the same length"
        )
    if len(c) and (not np.isfinite(c).all() or c.min() < 0 or c.max() > 1):
        raise EscalationError("confidence", "every confidence must be a number between 0 and 1")
    if len(a) and not np.isin(a.astype(np.float64), (0.0, 1.0)).all():
        raise EscalationError("agreed", "every agreed must be true or false (1 or 0)")
    return np.round(c, TIE_DECIMALS), a.astype(bool)


def fixed_sequence_threshold(
    confidence: Sequence[float],
    agreed: Sequence[bool | int],
    *,
    alpha: float = DEFAULT_ALPHA,
    delta: float = DEFAULT_DELTA,
) -> Calibration:
    """The lowest confidence threshold the fixed-sequence test accepts on these calibration
    items (``confidence[i]``: the judge's; ``agreed[i]``: whether it agreed with the human
    majority). Refuses bad α or δ and fewer items than :func:`min_items`."""
    alpha, delta = check_levels(alpha, delta)
    c, a = _arrays(confidence, agreed)
    n_total = len(c)
    need = min_items(alpha, delta)
    if n_total < need:
        raise EscalationError(
            "items",
            f"too few calibration items: {n_total} given, and with α = {alpha:g} and "
            f"δ = {delta:g} no threshold can pass with fewer than {need} (even if the judge "
            "agreed with people on every one)",
        )
    order = np.argsort(-c, kind="stable")
    c, disagree = c[order], ~a[order]
    levels, first = np.unique(-c, return_index=True)  # distinct confidences, highest first
    ends = np.append(first[1:], n_total)  # items at or above each level: c[:end]
    cum_disagree = np.cumsum(disagree)
    steps: list[Step] = []
    threshold, n_decided = None, 0
    for level, end in zip(-levels, ends, strict=True):
        n, k = int(end), int(cum_disagree[end - 1])
        p_value = float(sps.binom.cdf(k, n, alpha))
        passed = p_value <= delta
        steps.append(Step(float(level), n, k, k / n, p_value, passed))
        if not passed:
            break
        threshold, n_decided = float(level), n
    return Calibration(alpha, delta, n_total, threshold, n_decided, tuple(steps))


def held_out_check(
    calibration: Calibration, confidence: Sequence[float], agreed: Sequence[bool | int]
) -> dict[str, Any]:
    """The threshold applied to held-out items: how many the judge decides, the share, its
    observed agreement with people on them (``None`` when it decides none) and on the items
    it escalates."""
    c, a = _arrays(confidence, agreed)
    if calibration.threshold is None:
        decided = np.zeros(len(c), dtype=bool)
    else:
        decided = c >= calibration.threshold
    n, n_decided = len(c), int(decided.sum())
    escalated = ~decided
    return {
        "n": n,
        "n_decided": n_decided,
        "share_decided": n_decided / n if n else None,
        "agreement_decided": float(a[decided].mean()) if n_decided else None,
        "n_escalated": int(escalated.sum()),
        "agreement_escalated": float(a[escalated].mean()) if escalated.any() else None,
    }
