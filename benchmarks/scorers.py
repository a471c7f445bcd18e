"""Deterministic scorers for generations: the D.3 formatting proxies, the E.4 step-format
verifier and reference-calibrated length reward, and the gen/ref token ratio. Pure Python.

Each scorer turns one :class:`ScoreInput` into a flat dict of numbers (``None`` where a value
is undefined) and summarises a list of those dicts. Scorers are pluggable like Django's
session backends: by registered name (``"dup_ngram_rate"``) or by dotted path to a class or
instance (``"myproject.scoring.MyScorer"``). See :func:`get_scorer`.

Definitions (seed 000):

- ``step_count_mismatch`` (D.3): 1 when ``len(predicted_steps) != len(reference_steps)``.
- ``duplicate_steps`` (D.3): 1 when ``predicted_steps`` repeats an exact step string,
  i.e. ``len(set(steps)) != len(steps)``.
- ``dup_ngram_rate_n`` (D.3): join the predicted steps with spaces, split on whitespace, form
  the n-grams and compute ``sum_g max(0, c_g - 1) / total n-grams`` (0 when there are no
  n-grams); ``dup_ngram_rate`` is the unweighted mean over n = 1..4. Averaged over examples.
- ``step_format`` (E.4): 1 when the final answer has explicitly numbered lines numbered
  1, 2, …, k consecutively and, when the expected count n is known, k == n; else 0
  (``None``, left out of the rate, when the raw completion is unknown).
- ``length_reward`` (E.4): r = |gen| / |ref| in o200k_base tokens; 1 when |r - 1| <= tau,
  else exp(-alpha * (|r - 1| - tau) / (1 - tau)); tau = 0.2, alpha = 5.
- ``gen_ref_ratio``: o200k_base tokens of the generated steps over those of the reference
  steps. The summary's ``gen_ref_ratio`` is mean gen tokens / mean ref tokens, as Table 12
  reports it (97.96 / 97.44 = 1.01); ``mean_example_gen_ref_ratio`` averages per example.
"""

from __future__ import annotations

import importlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from benchmarks.generation import numbered_lines
from benchmarks.tokens import count_steps_tokens

Number = float | int | None


@dataclass(frozen=True)
class ScoreInput:
    predicted_steps: Sequence[str]
    reference_steps: Sequence[str]
    completion: str | None = ""  # None: unknown (imported without model_completion)
    gen_tokens: int | None = None  # precomputed o200k_base counts (computed when None)
    ref_tokens: int | None = None

    @property
    def expected_n(self) -> int | None:
        return len(self.reference_steps) or None

    def gen_token_count(self) -> int:
        return (
            self.gen_tokens
            if self.gen_tokens is not None
            else count_steps_tokens(self.predicted_steps)
        )

    def ref_token_count(self) -> int:
        return (
            self.ref_tokens
            if self.ref_tokens is not None
            else count_steps_tokens(self.reference_steps)
        )


class Scorer(Protocol):
    name: str

    def score(self, item: ScoreInput) -> dict[str, Number]: ...

    def summarize(self, rows: Sequence[Mapping[str, Number]]) -> dict[str, Number]: ...


def _mean(values: Iterable[Number]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


class BaseScorer:
    """Per-example values; the summary is the mean of each key over examples (``None``s
    left out), so a 0/1 value summarises to a rate."""

    name = ""
    keys: tuple[str, ...] = ()

    def score(self, item: ScoreInput) -> dict[str, Number]:  # pragma: no cover - abstract
        raise NotImplementedError

    def summarize(self, rows: Sequence[Mapping[str, Number]]) -> dict[str, Number]:
        return {key: _mean(row.get(key) for row in rows) for key in self.keys}


# --- pure metric functions (the definitions; scorers wrap them) -----------------------------
def step_count_mismatch(predicted: Sequence[str], reference: Sequence[str]) -> int:
    return int(len(predicted) != len(reference))


def has_duplicate_steps(predicted: Sequence[str]) -> int:
    return int(len(set(predicted)) != len(predicted))


def dup_ngram_rate(predicted: Sequence[str], n: int) -> float:
    if n < 1:
        raise ValueError(f"n-gram order must be >= 1, got {n}")
    tokens = " ".join(predicted).split()
    total = len(tokens) - n + 1
    if total <= 0:
        return 0.0
    counts = Counter(tuple(tokens[i : i + n]) for i in range(total))
    return sum(c - 1 for c in counts.values() if c > 1) / total


def step_format_ok(completion: str, expected_n: int | None = None) -> int:
    numbers = numbered_lines(completion)
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        return 0
    if expected_n is not None and len(numbers) != expected_n:
        return 0
    return 1


def length_reward(ratio: float, *, tau: float = 0.2, alpha: float = 5.0) -> float:
    if not 0 <= tau < 1:
        raise ValueError(f"tau must be in [0, 1), got {tau}")
    dev = abs(ratio - 1.0)
    if dev <= tau + 1e-12:
        return 1.0
    return math.exp(-alpha * (dev - tau) / (1.0 - tau))


# --- scorers ---------------------------------------------------------------------------------
class StepCountMismatch(BaseScorer):
    name = "step_count_mismatch"
    keys = ("step_count_mismatch",)

    def score(self, item: ScoreInput) -> dict[str, Number]:
        return {
            "step_count_mismatch": step_count_mismatch(item.predicted_steps, item.reference_steps)
        }


class DuplicateSteps(BaseScorer):
    name = "duplicate_steps"
    keys = ("duplicate_steps",)

    def score(self, item: ScoreInput) -> dict[str, Number]:
        return {"duplicate_steps": has_duplicate_steps(item.predicted_steps)}


class DupNgramRate(BaseScorer):
    name = "dup_ngram_rate"

    def __init__(self, orders: Sequence[int] = (1, 2, 3, 4)) -> None:
        self.orders = tuple(orders)
        self.keys = (*(f"dup_ngram_rate_{n}" for n in self.orders), "dup_ngram_rate")

    def score(self, item: ScoreInput) -> dict[str, Number]:
        rates = {
            f"dup_ngram_rate_{n}": dup_ngram_rate(item.predicted_steps, n) for n in self.orders
        }
        rates["dup_ngram_rate"] = sum(rates.values()) / len(rates)
        return rates


class StepFormat(BaseScorer):
    name = "step_format"
    keys = ("step_format",)

    def score(self, item: ScoreInput) -> dict[str, Number]:
        if item.completion is None:
            return {"step_format": None}
        return {"step_format": step_format_ok(item.completion, item.expected_n)}


class LengthReward(BaseScorer):
    name = "length_reward"
    keys = ("length_reward",)

    def __init__(self, tau: float = 0.2, alpha: float = 5.0) -> None:
        self.tau, self.alpha = tau, alpha

    def score(self, item: ScoreInput) -> dict[str, Number]:
        ref = item.ref_token_count()
        if ref <= 0:
            return {"length_reward": None}
        return {
            "length_reward": length_reward(
                item.gen_token_count() / ref, tau=self.tau, alpha=self.alpha
            )
        }


class TokenRatio(BaseScorer):
    name = "token_ratio"
    keys = ("gen_tokens", "ref_tokens", "gen_ref_ratio")

    def score(self, item: ScoreInput) -> dict[str, Number]:
        gen, ref = item.gen_token_count(), item.ref_token_count()
        return {
            "gen_tokens": gen,
            "ref_tokens": ref,
            "gen_ref_ratio": (gen / ref) if ref > 0 else None,
        }

    def summarize(self, rows: Sequence[Mapping[str, Number]]) -> dict[str, Number]:
        avg_gen = _mean(r.get("gen_tokens") for r in rows)
        avg_ref = _mean(r.get("ref_tokens") for r in rows)
        return {
            "avg_gen_tokens": avg_gen,
            "avg_ref_tokens": avg_ref,
            "gen_ref_ratio": (avg_gen / avg_ref) if avg_gen is not None and avg_ref else None,
            "mean_example_gen_ref_ratio": _mean(r.get("gen_ref_ratio") for r in rows),
        }


# --- registry --------------------------------------------------------------------------------
SCORERS: dict[str, Callable[[], Scorer]] = {
    "step_count_mismatch": StepCountMismatch,
    "duplicate_steps": DuplicateSteps,
    "dup_ngram_rate": DupNgramRate,
    "step_format": StepFormat,
    "length_reward": LengthReward,
    "token_ratio": TokenRatio,
}
DEFAULT_SCORERS: tuple[str, ...] = tuple(SCORERS)


def register(name: str) -> Callable[[Callable[[], Scorer]], Callable[[], Scorer]]:
    """Class decorator adding a scorer to the registry under ``name``."""

    def deco(factory: Callable[[], Scorer]) -> Callable[[], Scorer]:
        SCORERS[name] = factory
        return factory

    return deco


def get_scorer(name: str) -> Scorer:
    """A scorer by registered name or dotted path (``pkg.module.ClassOrInstance``)."""
    if name in SCORERS:
        return SCORERS[name]()
    if "." not in name:
        raise ValueError(
            f"unknown scorer {name!r}; known: {', '.join(sorted(SCORERS))} or a dotted path"
        )
    module_path, _, attr = name.rpartition(".")
    try:
        obj: Any = getattr(importlib.import_module(module_path), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"scorer {name!r} cannot be imported: {exc}") from exc
    scorer = obj() if isinstance(obj, type) else obj
    if not callable(getattr(scorer, "score", None)) or not callable(
        getattr(scorer, "summarize", None)
    ):
        raise ValueError(f"scorer {name!r} has no score()/summarize() methods")
    return scorer


def get_scorers(names: Sequence[str] | None = None) -> list[Scorer]:
    return [get_scorer(n) for n in (names or DEFAULT_SCORERS)]


def score_example(item: ScoreInput, scorers: Sequence[Scorer]) -> dict[str, Number]:
    out: dict[str, Number] = {}
    for scorer in scorers:
        out.update(scorer.score(item))
    return out


def summarize(rows: Sequence[Mapping[str, Number]], scorers: Sequence[Scorer]) -> dict[str, Number]:
    """Summary over examples; ``n_examples`` counts the rows."""
    out: dict[str, Number] = {"n_examples": len(rows)}
    for scorer in scorers:
        out.update(scorer.summarize(rows))
    return out
