"""A judge's verdicts against the human majority (seed 000 §4, Figure 3). Pure Python and
numpy: no Django, no ORM. The judge leaderboard's agreement column and every validation report
(:mod:`validation`) count a judge against people with these functions.

- :func:`human_majority` — the human majority label of each item (ties kept as ``None``).
- :func:`judge_vs_majority` — a judge's agreement with the human majority overall and per
  class (``has_failure`` / ``no_failure``, the class being the *human majority's*), Cohen's κ
  and the confusion table; tied items are excluded and counted.

A verdict is ``True`` (has_failure), ``False`` (no_failure) or ``None`` (the judge's output
could not be parsed); an item absent from a verdict mapping was not judged. Statistics that
cannot be computed are :class:`annotation.agreement.Undefined` with the reason, never ``nan``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from annotation.agreement import (
    LabelMatrix,
    Stat,
    Undefined,
    cohen_kappa_from_confusion,
    majority_labels,
    stat_json,
)
from core.lazy import lazy_module

np = lazy_module("numpy")

HAS_FAILURE = "has_failure"
NO_FAILURE = "no_failure"
CLASSES = (HAS_FAILURE, NO_FAILURE)  # confusion rows/columns in this order

NO_COMPARED = "no item has both a clear human majority and a parsed judge verdict"


def class_index(has_failure: bool) -> int:
    """The row (or column) of a verdict in a confusion table ordered as :data:`CLASSES`."""
    return 0 if has_failure else 1


def share(n_agree: int, n: int, reason: str) -> Stat:
    """``n_agree / n``, :class:`~annotation.agreement.Undefined` (``reason``) when ``n`` is 0."""
    return n_agree / n if n else Undefined(reason)


# --- human majority --------------------------------------------------------------------------


def human_majority(
    triples: Iterable[tuple[Hashable, Hashable, bool]],
) -> dict[Hashable, bool | None]:
    """``{item: True | False | None}`` from ``(item, annotator, has_failure)`` triples:
    the majority binary label of each labelled item, ``None`` where the top count is tied."""
    matrix = LabelMatrix.from_triples(triples, categories=(False, True))
    majority = majority_labels(matrix)
    out: dict[Hashable, bool | None] = {}
    for i, item in enumerate(matrix.items):
        if majority.n_labels[i] == 0:
            continue
        out[item] = None if majority.tie[i] else bool(matrix.categories[int(majority.codes[i])])
    return out


# --- judge vs human majority -----------------------------------------------------------------


@dataclass(frozen=True)
class ClassAgreement:
    """Agreement on the items whose human majority is ``label``."""

    label: str
    n_items: int
    n_agree: int
    agreement: Stat

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "n_items": self.n_items,
            "n_agree": self.n_agree,
            "agreement": stat_json(self.agreement),
        }


@dataclass(frozen=True)
class HumanAgreement:
    """A judge against the human majority label.

    ``n_items`` items have human labels; ``n_tied`` of them have a tied majority and are
    excluded; ``n_not_judged`` have no judgment and ``n_parse_failed`` an unparsed one (both
    excluded). ``confusion`` rows: human majority, columns: judge, in :data:`CLASSES` order.
    """

    n_items: int
    n_tied: int
    n_not_judged: int
    n_parse_failed: int
    n_compared: int
    n_agree: int
    agreement: Stat
    kappa: Stat
    per_class: dict[str, ClassAgreement]
    confusion: list[list[int]]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "n_tied": self.n_tied,
            "n_not_judged": self.n_not_judged,
            "n_parse_failed": self.n_parse_failed,
            "n_compared": self.n_compared,
            "n_agree": self.n_agree,
            "agreement": stat_json(self.agreement),
            "kappa": stat_json(self.kappa),
            "per_class": {k: v.to_json() for k, v in self.per_class.items()},
            "confusion": {
                "rows": "human_majority",
                "columns": "judge",
                "labels": list(CLASSES),
                "counts": self.confusion,
            },
        }


def judge_vs_majority(
    *,
    majority: Mapping[Hashable, bool | None],
    verdicts: Mapping[Hashable, bool | None],
) -> HumanAgreement:
    """Agreement of ``verdicts`` with the human ``majority`` (see :class:`HumanAgreement`)."""
    table = np.zeros((2, 2), dtype=np.int64)
    n_tied = n_not_judged = n_parse_failed = 0
    for item, human in majority.items():
        if human is None:
            n_tied += 1
            continue
        if item not in verdicts:
            n_not_judged += 1
            continue
        verdict = verdicts[item]
        if verdict is None:
            n_parse_failed += 1
            continue
        table[class_index(human), class_index(bool(verdict))] += 1
    n = int(table.sum())
    n_agree = int(np.trace(table))
    per_class = {}
    for label in CLASSES:
        i = CLASSES.index(label)
        n_class = int(table[i].sum())
        per_class[label] = ClassAgreement(
            label=label,
            n_items=n_class,
            n_agree=int(table[i, i]),
            agreement=share(
                int(table[i, i]), n_class, f"no compared item has a human majority of {label}"
            ),
        )
    return HumanAgreement(
        n_items=len(majority),
        n_tied=n_tied,
        n_not_judged=n_not_judged,
        n_parse_failed=n_parse_failed,
        n_compared=n,
        n_agree=n_agree,
        agreement=share(n_agree, n, NO_COMPARED),
        kappa=cohen_kappa_from_confusion(table) if n else Undefined(NO_COMPARED),
        per_class=per_class,
        confusion=table.tolist(),
    )
