"""Agreement rows shared by the form types' agreement levels (pure; numbers from
:mod:`annotation.agreement`). A row is ``{"name", "stat": {"value"|"undefined"}, "ci"?, "n"?}``."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from annotation import agreement as ag
from annotation.agreement_report import alpha_with_ci
from annotation.form_types.base import AnnotatedAnswer


def matrix_of(
    answers: Iterable[AnnotatedAnswer],
    value: Callable[[AnnotatedAnswer], Hashable | None],
    *,
    categories: Sequence[Hashable] | None = None,
) -> ag.LabelMatrix:
    """Items × annotators of ``value(answer)`` (answers where it is None are left out)."""
    triples = [(a.item, a.annotator, v) for a in answers if (v := value(a)) is not None]
    return ag.LabelMatrix.from_triples(triples, categories=categories)


def alpha_row(
    name: str, matrix: ag.LabelMatrix, *, level: str, n_resamples: int, seed: int
) -> dict:
    out = alpha_with_ci(matrix, level, n_resamples, 0.95, seed)
    row: dict[str, Any] = {"name": name, "stat": {k: v for k, v in out.items() if k != "ci"}}
    if "ci" in out:
        row["ci"] = out["ci"]
    row["n"] = n_pairable(matrix)
    return row


def stat_row(name: str, value: ag.Stat, *, n: int | None = None, percent: bool = False) -> dict:
    row: dict[str, Any] = {"name": name, "stat": ag.stat_json(value)}
    if n is not None:
        row["n"] = n
    if percent:
        row["percent"] = True
    return row


def n_pairable(matrix: ag.LabelMatrix) -> int:
    """Items labelled by two or more annotators."""
    return int((matrix.labels_per_item() >= 2).sum())


def share(numerator: int, denominator: int) -> ag.Stat:
    if not denominator:
        return ag.Undefined(ag.NO_LABELS)
    return numerator / denominator


def by_item(answers: Iterable[AnnotatedAnswer]) -> dict[Hashable, list[AnnotatedAnswer]]:
    out: dict[Hashable, list[AnnotatedAnswer]] = {}
    for a in answers:
        out.setdefault(a.item, []).append(a)
    return out
