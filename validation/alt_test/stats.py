"""The alternative annotator test (alt-test; Calderon, Reichart & Dror, ACL 2025,
arXiv 2501.10970), as its reference implementation (nitaytech/AltTest) computes it. Pure: no
Django.

Leave one annotator out at a time. On each item that annotator labelled, score the judge and the
left-out annotator against the remaining annotators (``accuracy``: share of them with the same
label; ``neg_rmse``: minus the root mean squared difference). The judge "wins" an item when its
score is at least the annotator's, the annotator when theirs is at least the judge's (a tie is a
win for both). Per annotator a one-sided one-sample t-test of the differences (annotator win −
judge win) against ε (H0: mean ≥ ε); the Benjamini–Yekutieli procedure at ``q`` over the
annotators; the winning rate ω is the share of annotators rejected and the judge passes when
ω ≥ 0.5; the advantage probability ρ is the mean over annotators of the share of items the judge
wins. Items with fewer than 2 annotators (or no judge label) and annotators with fewer than 30
remaining items are left out and listed.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.lazy import lazy_module

np = lazy_module("numpy")
sps = lazy_module("scipy.stats")
multitest = lazy_module("statsmodels.stats.multitest")


# ε by who the annotators are, as the alt-test paper suggests; crowd workers by default
EPSILON_BY_ANNOTATORS = {"crowd": 0.1, "skilled": 0.15, "experts": 0.2}
ANNOTATORS_SAID = {
    "crowd": "crowd workers",
    "skilled": "skilled annotators",
    "experts": "experts",
}
DEFAULT_ANNOTATORS = "crowd"
DEFAULT_EPSILON = EPSILON_BY_ANNOTATORS[DEFAULT_ANNOTATORS]
DEFAULT_Q = 0.05
MIN_ANNOTATORS_PER_ITEM = 2
MIN_ITEMS_PER_ANNOTATOR = 30
PASS_WINNING_RATE = 0.5


def accuracy(label: Any, others: Sequence[Any]) -> float:
    """Share of ``others`` equal to ``label``."""
    return float(np.mean([label == o for o in others]))


def neg_rmse(label: float, others: Sequence[float]) -> float:
    """Minus the root mean squared difference between ``label`` and ``others``."""
    return -float(np.sqrt(np.mean([(label - o) ** 2 for o in others])))


SCORINGS: dict[str, Callable[[Any, Sequence[Any]], float]] = {
    "accuracy": accuracy,
    "neg_rmse": neg_rmse,
}


def one_sided_p_values(differences: np.ndarray, epsilon: float) -> np.ndarray:
    """p of the one-sample t-test of H0 mean ≥ ε against mean < ε along the last axis (one
    test per row); NaN where the t statistic is undefined (every difference equal to ε)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant differences: t is ±inf
        return np.asarray(sps.ttest_1samp(differences, epsilon, axis=-1, alternative="less").pvalue)


def one_sided_p_value(differences: Sequence[float], epsilon: float) -> float | None:
    """:func:`one_sided_p_values` of one annotator's differences; None where undefined."""
    p = float(one_sided_p_values(np.asarray(differences, dtype=float), epsilon))
    return None if math.isnan(p) else p


def benjamini_yekutieli(p_values: Sequence[float | None], q: float) -> list[bool]:
    """Which hypotheses the Benjamini–Yekutieli step-up procedure rejects at FDR ``q``. An
    undefined p (None) counts among the m hypotheses and is never rejected, as in the reference
    (it enters as 1.0, which no BY threshold reaches)."""
    if not p_values:
        return []
    values = np.array([1.0 if p is None else p for p in p_values], dtype=float)
    reject = multitest.multipletests(values, alpha=q, method="fdr_by")[0]
    return [bool(r) for r in reject]


@dataclass(frozen=True)
class AnnotatorTest:
    annotator: Hashable
    n_items: int
    p_value: float | None
    rejected: bool
    advantage_probability: float  # share of this annotator's items the judge wins

    def to_json(self) -> dict[str, Any]:
        out = {
            "annotator": str(self.annotator),
            "p_value": self.p_value,
            "rejected": self.rejected,
            "n_items": self.n_items,
            "advantage_probability": self.advantage_probability,
        }
        if self.p_value is None:
            out["p_value_undefined"] = "every difference equals ε: there is no t statistic"
        return out


@dataclass(frozen=True)
class AltTestResult:
    scoring: str
    epsilon: float
    q: float
    n_items: int  # items kept (≥ 2 annotators and a judge label)
    annotators: list[AnnotatorTest]
    skipped_annotators: list[dict[str, Any]] = field(default_factory=list)
    skipped_items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def winning_rate(self) -> float | None:
        if not self.annotators:
            return None
        return sum(a.rejected for a in self.annotators) / len(self.annotators)

    @property
    def advantage_probability(self) -> float | None:
        if not self.annotators:
            return None
        return float(np.mean([a.advantage_probability for a in self.annotators]))

    @property
    def passed(self) -> bool:
        omega = self.winning_rate
        return omega is not None and omega >= PASS_WINNING_RATE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "winning_rate": self.winning_rate,
            "advantage_probability": self.advantage_probability,
            "passed": self.passed,
            "epsilon": self.epsilon,
            "q": self.q,
            "scoring": self.scoring,
            "n_items": self.n_items,
            "annotators": [a.to_json() for a in self.annotators],
            "skipped": {"annotators": self.skipped_annotators, "items": self.skipped_items},
        }
        if not self.annotators:
            out["undefined"] = (
                f"no annotator has {MIN_ITEMS_PER_ANNOTATOR} or more items shared with another "
                "annotator and the judge"
            )
        return out


def _check(scoring: str, epsilon: float, q: float) -> Callable[[Any, Sequence[Any]], float]:
    if scoring not in SCORINGS:
        raise ValueError(f"scoring: expected one of {', '.join(SCORINGS)}, got {scoring!r}")
    if not isinstance(epsilon, int | float) or not -1 <= epsilon <= 1 or math.isnan(epsilon):
        raise ValueError(f"epsilon: expected a number from -1 to 1, got {epsilon!r}")
    if not isinstance(q, int | float) or not 0 < q < 1:
        raise ValueError(f"q: expected a number between 0 and 1, got {q!r}")
    return SCORINGS[scoring]


def alt_test(
    *,
    humans: Mapping[Hashable, Mapping[Hashable, Any]],
    judge: Mapping[Hashable, Any],
    scoring: str = "accuracy",
    epsilon: float = DEFAULT_EPSILON,
    q: float = DEFAULT_Q,
    min_annotators_per_item: int = MIN_ANNOTATORS_PER_ITEM,
    min_items_per_annotator: int = MIN_ITEMS_PER_ANNOTATOR,
) -> AltTestResult:
    """The alt-test of ``judge`` (``{item: label}``) against ``humans`` (``{annotator: {item:
    label}}``), see the module docstring. Annotators are reported in the order given."""
    score = _check(scoring, epsilon, q)
    annotators_of: dict[Hashable, list[Hashable]] = {}
    for annotator, labels in humans.items():
        for item in labels:
            annotators_of.setdefault(item, []).append(annotator)
    skipped_items, kept = [], {}
    for item, who in annotators_of.items():
        if len(who) < min_annotators_per_item:
            reason = f"fewer than {min_annotators_per_item} annotators"
        elif item not in judge:
            reason = "no judge label"
        else:
            kept[item] = who
            continue
        skipped_items.append({"item": str(item), "n_annotators": len(who), "reason": reason})
    tests: list[tuple[Hashable, int, float | None, float]] = []
    skipped_annotators = []
    for left_out, labels in humans.items():
        items = [i for i in labels if i in kept]
        if len(items) < min_items_per_annotator:
            skipped_annotators.append(
                {
                    "annotator": str(left_out),
                    "n_items": len(items),
                    "reason": f"fewer than {min_items_per_annotator} items",
                }
            )
            continue
        judge_wins, differences = [], []
        for item in items:
            others = [humans[a][item] for a in kept[item] if a != left_out]
            human_score = score(labels[item], others)
            judge_score = score(judge[item], others)
            judge_win = 1 if judge_score >= human_score else 0
            human_win = 1 if human_score >= judge_score else 0
            judge_wins.append(judge_win)
            differences.append(human_win - judge_win)
        tests.append(
            (
                left_out,
                len(items),
                one_sided_p_value(differences, epsilon),
                float(np.mean(judge_wins)),
            )
        )
    rejected = benjamini_yekutieli([t[2] for t in tests], q)
    return AltTestResult(
        scoring=scoring,
        epsilon=float(epsilon),
        q=float(q),
        n_items=len(kept),
        annotators=[
            AnnotatorTest(annotator=a, n_items=n, p_value=p, rejected=r, advantage_probability=rho)
            for (a, n, p, rho), r in zip(tests, rejected, strict=True)
        ],
        skipped_annotators=skipped_annotators,
        skipped_items=skipped_items,
    )
