"""Majority labels (ties reported, never broken) and leave-one-out agreement with the majority."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from annotation.agreement.matrix import MISSING, LabelMatrix, Stat, Undefined
from core.lazy import lazy_module

np = lazy_module("numpy")


@dataclass(frozen=True)
class Majority:
    """Per item: ``codes[i]`` the majority category (``-1`` if tied or unlabelled), ``tie[i]``."""

    codes: np.ndarray
    tie: np.ndarray
    n_labels: np.ndarray
    counts: np.ndarray  # items × categories

    def tied_categories(self, item: int) -> list[int]:
        row = self.counts[item]
        return [int(c) for c in np.flatnonzero(row == row.max())] if self.tie[item] else []


def majority_labels(matrix: LabelMatrix) -> Majority:
    """The most frequent label of each item; a tie for the top count is reported, never broken.

    An item labelled once has that label as its majority; an unlabelled item has none.
    """
    counts = matrix.value_counts()
    codes, tie = _majority_of_counts(counts)
    return Majority(codes=codes, tie=tie, n_labels=counts.sum(axis=1), counts=counts)


def _majority_of_counts(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if counts.shape[1] == 0:
        n = counts.shape[0]
        return np.full(n, MISSING, dtype=np.int64), np.zeros(n, dtype=bool)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    labelled = top > 0
    tie = labelled & (n_top > 1)
    codes = np.where(labelled & ~tie, counts.argmax(axis=1), MISSING)
    return codes, tie


@dataclass(frozen=True)
class LeaveOneOut:
    """One annotator against the majority label of the other annotators.

    ``n_compared`` items had a clear majority among the others; ``n_others_tied`` items had a
    tie among the others (not counted as agreement or disagreement); ``n_no_others`` items
    nobody else labelled.
    """

    annotator: Hashable
    n_items: int
    n_compared: int
    n_agree: int
    n_others_tied: int
    n_no_others: int
    agreement: Stat


def leave_one_out(matrix: LabelMatrix) -> list[LeaveOneOut]:
    """For each annotator, the share of their items on which they match the others' majority.

    This is how seed 000 §4.3 sets a human baseline for judges (84.7–88.5%): a judge that
    agrees with the human majority about as often as a held-out human does performs like an
    individual annotator. Items where the others tie are reported separately.
    """
    counts = matrix.value_counts()
    k = matrix.n_categories
    n = len(matrix.annotators)
    # One row per label: the counts of its item without the label itself (the others).
    others = counts[matrix.rows]
    if k:
        others[np.arange(len(others)), matrix.values] -= 1
    codes, tie = _majority_of_counts(others)
    has_others = others.sum(axis=1) > 0
    compared = has_others & ~tie
    agree = compared & (codes == matrix.values)

    def per_annotator(mask: np.ndarray) -> list[int]:
        return np.bincount(matrix.cols[mask], minlength=n).tolist()

    n_items = np.bincount(matrix.cols, minlength=n).tolist()
    n_compared = per_annotator(compared)
    n_agree = per_annotator(agree)
    n_tied = per_annotator(has_others & tie)
    n_no_others = per_annotator(~has_others)
    n_with_others = per_annotator(has_others)
    out: list[LeaveOneOut] = []
    for a, annotator in enumerate(matrix.annotators):
        if not n_items[a]:
            agreement: Stat = Undefined(f"annotator {annotator!s} labelled no item")
        elif not n_with_others[a]:
            agreement = Undefined("no other annotator labelled this annotator's items")
        elif not n_compared[a]:
            agreement = Undefined("the other annotators tie on every shared item")
        else:
            agreement = n_agree[a] / n_compared[a]
        out.append(
            LeaveOneOut(
                annotator=annotator,
                n_items=n_items[a],
                n_compared=n_compared[a],
                n_agree=n_agree[a],
                n_others_tied=n_tied[a],
                n_no_others=n_no_others[a],
                agreement=agreement,
            )
        )
    return out
