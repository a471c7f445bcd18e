"""The heuristics filter of How2Mine (seed 000 §3.2 stage 2, §B.3). Pure Python, no Django.

Two checks in sequence:

1. step count: ``min_steps <= len(steps) <= max_steps`` (defaults 5–15);
2. n-gram repetition: every step is lower-cased and each character that is neither a word
   character nor whitespace becomes a space; the words of each step give its n-grams (n-grams
   never cross a step boundary), pooled over all steps. The repetition rate is the share of
   n-grams that repeat an earlier one, ``sum(max(0, c_g - 1)) / total`` (which equals
   ``1 - distinct / total``). A procedure with fewer than two steps, or with no n-gram of that
   size, has rate 0. It is rejected when the 2-gram rate is >= 0.40, the 3-gram rate >= 0.35 or
   the 4-gram rate >= 0.30 (the reference implementation's definition).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

DEFAULT_MIN_STEPS = 5
DEFAULT_MAX_STEPS = 15
DEFAULT_THRESHOLDS: dict[int, float] = {2: 0.40, 3: 0.35, 4: 0.30}

_NON_WORD = re.compile(r"[^\w\s]")
# Fast path for ASCII text: the same mapping as _NON_WORD (ASCII \w is [A-Za-z0-9_], \s includes
# \x1c-\x1f), done by str.translate.
_ASCII_TABLE = {
    c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_" or chr(c).isspace())
}


@dataclass(frozen=True)
class HeuristicsConfig:
    min_steps: int = DEFAULT_MIN_STEPS
    max_steps: int = DEFAULT_MAX_STEPS
    thresholds: dict[int, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))

    def __post_init__(self) -> None:
        if self.min_steps < 1:
            raise ValueError(f"min_steps must be >= 1, got {self.min_steps}")
        if self.max_steps < self.min_steps:
            raise ValueError(
                f"max_steps ({self.max_steps}) must be >= min_steps ({self.min_steps})"
            )
        for n, t in self.thresholds.items():
            if n < 1 or not 0.0 <= t <= 1.0:
                raise ValueError(f"repetition threshold for {n}-grams must be in [0, 1], got {t}")


@dataclass(frozen=True)
class HeuristicsResult:
    passed: bool
    reason: str
    rates: dict[int, float]


def normalize_words(step: str) -> list[str]:
    """Lower-case, punctuation to spaces, split on whitespace."""
    return _NON_WORD.sub(" ", step.lower()).split()


_SEP = "\x1e"  # a whitespace character for regex and str.split, so it survives normalisation


def _step_words(steps: Sequence[str]) -> list[list[str]]:
    joined = _SEP.join(steps)
    if joined.count(_SEP) != len(steps) - 1:  # a step contains the separator itself
        return [normalize_words(s) for s in steps]
    lowered = joined.lower()
    text = lowered.translate(_ASCII_TABLE) if lowered.isascii() else _NON_WORD.sub(" ", lowered)
    return [part.split() for part in text.split(_SEP)]


def _rate(words: list[list[str]], n: int) -> float:
    seen: set = set()
    total = 0
    for w in words:
        k = len(w) - n + 1
        if k <= 0:
            continue
        total += k
        if n == 2:
            seen.update(pairwise(w))
        elif n == 3:
            seen.update(zip(w, w[1:], w[2:]))  # noqa: B905 - windows; strict= costs ~9% here
        elif n == 4:
            seen.update(zip(w, w[1:], w[2:], w[3:]))  # noqa: B905 - as above
        else:
            seen.update(zip(*(w[i:] for i in range(n))))  # noqa: B905 - as above
    return (total - len(seen)) / total if total else 0.0


def repetition_rates(steps: Sequence[str], ns: Sequence[int] = (2, 3, 4)) -> dict[int, float]:
    """Repetition rate of each n-gram size, pooled across the steps (never across a boundary)."""
    if len(steps) < 2:
        return dict.fromkeys(ns, 0.0)
    words = _step_words(steps)
    return {n: _rate(words, n) for n in ns}


def apply_heuristics(
    steps: Sequence[str], config: HeuristicsConfig | None = None
) -> HeuristicsResult:
    cfg = config or _DEFAULT
    n = len(steps)
    if n < cfg.min_steps:
        return HeuristicsResult(False, f"too few steps: {n} < {cfg.min_steps}", {})
    if n > cfg.max_steps:
        return HeuristicsResult(False, f"too many steps: {n} > {cfg.max_steps}", {})
    ns = sorted(cfg.thresholds)
    rates = repetition_rates(steps, ns)
    for size in ns:
        if rates[size] >= cfg.thresholds[size]:
            return HeuristicsResult(
                False,
                f"high repetition: {size}-gram rate {rates[size]:.2f} >= {cfg.thresholds[size]:.2f}",
                rates,
            )
    return HeuristicsResult(True, "", rates)


_DEFAULT = HeuristicsConfig()
