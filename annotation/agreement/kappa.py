"""Raw and chance-corrected pairwise agreement: percent agreement, Fleiss' κ, Cohen's κ.

Percent agreement and Fleiss' κ share the per-item pairwise agreement (the share of annotator
pairs on an item that agree); Cohen's κ compares two annotators through their confusion table.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from annotation.agreement.matrix import (
    NO_ITEM_TWICE,
    ONE_CATEGORY,
    ONE_ITEM_IN_COMMON,
    LabelMatrix,
    Stat,
    Undefined,
    check_pairable,
    pairable_counts,
)
from core.lazy import lazy_module

np = lazy_module("numpy")


def _per_item_pair_agreement(counts: np.ndarray) -> np.ndarray:
    m = counts.sum(axis=1)
    return (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))


def percent_agreement(matrix: LabelMatrix) -> Stat:
    """Pairwise percent agreement: the share of annotator pairs on an item that gave the same label.

    Per item labelled by m ≥ 2 annotators: agreeing pairs / (m·(m−1)/2); then the mean over
    those items (each item weighs the same). Not corrected for chance: with a skewed label
    distribution, high agreement can come from everyone giving the common label. Items
    labelled once are left out.
    """
    undefined = check_pairable(matrix, chance_corrected=False)
    if undefined:
        return undefined
    return float(_per_item_pair_agreement(pairable_counts(matrix)).mean())


def fleiss_kappa(matrix: LabelMatrix) -> Stat:
    """Fleiss' κ (1971): chance-corrected agreement for many annotators.

    κ = (P̄ − P̄e) / (1 − P̄e), where P̄ is the mean per-item pairwise agreement (as in
    :func:`percent_agreement`) and P̄e = Σ p_j², p_j the share of all labels in category j.
    Fleiss assumed every item has the same number of raters; here items labelled by
    different numbers of annotators are handled by the usual generalisation (each item's
    agreement uses its own m; p_j pools all labels), which equals Fleiss' formula when m is
    constant. Items labelled once are left out. Read like α: 1 perfect, 0 chance level.
    """
    undefined = check_pairable(matrix)
    if undefined:
        return undefined
    return fleiss_kappa_from_counts(pairable_counts(matrix))


def fleiss_kappa_from_counts(counts: np.ndarray) -> Stat:
    """Fleiss' κ from an items × categories table of rater counts (rows with < 2 raters ignored)."""
    counts = np.asarray(counts, dtype=np.int64)
    counts = counts[counts.sum(axis=1) >= 2] if counts.size else counts
    if not len(counts):
        return Undefined(NO_ITEM_TWICE)
    p_bar = _per_item_pair_agreement(counts).mean()
    p_j = counts.sum(axis=0) / counts.sum()
    p_e = float((p_j**2).sum())
    if p_e >= 1:
        return Undefined(ONE_CATEGORY)
    return float((p_bar - p_e) / (1 - p_e))


def confusion_matrix(a: np.ndarray, b: np.ndarray, n_categories: int) -> np.ndarray:
    """Categories × categories counts of (a's label, b's label) over items both labelled."""
    a = np.asarray(a)
    b = np.asarray(b)
    both = (a >= 0) & (b >= 0)
    flat = a[both] * n_categories + b[both]
    return np.bincount(flat, minlength=n_categories * n_categories).reshape(
        n_categories, n_categories
    )


def cohen_kappa_from_confusion(table: np.ndarray) -> Stat:
    """Cohen's κ from a square table of counts (rows: annotator A's label, columns: B's)."""
    table = np.asarray(table, dtype=np.float64)
    total = table.sum()
    if total == 0:
        return Undefined("the two annotators labelled no item in common")
    if total == 1:
        return Undefined(ONE_ITEM_IN_COMMON)
    p_o = np.trace(table) / total
    p_e = float((table.sum(axis=1) / total) @ (table.sum(axis=0) / total))
    if p_e >= 1:
        return Undefined(ONE_CATEGORY)
    return float((p_o - p_e) / (1 - p_e))


def cohen_kappa(a: np.ndarray, b: np.ndarray, n_categories: int) -> Stat:
    """Cohen's κ of two annotators over the items both labelled.

    κ = (p_o − p_e) / (1 − p_e): p_o the share of items where they agree, p_e the agreement
    expected if each labelled at random with their own label frequencies. 1 perfect, 0 chance
    level; unlike α it credits annotators for differing marginals (each has their own p).
    """
    return cohen_kappa_from_confusion(confusion_matrix(a, b, n_categories))


@dataclass(frozen=True)
class PairAgreement:
    annotator_a: Hashable
    annotator_b: Hashable
    n_items: int
    percent_agreement: Stat
    kappa: Stat
    confusion: np.ndarray  # rows: a's label, columns: b's label


def shared_label_pairs(matrix: LabelMatrix) -> tuple[np.ndarray, np.ndarray]:
    """Every two labels given to the same item by two annotators, as indices into the
    matrix's coordinate arrays: ``(first, second)``, the first annotator's column before the
    second's. Built one offset at a time over the item-sorted labels, so the work grows with
    the pairs that exist, never with annotators²."""
    rows = matrix.rows
    firsts, seconds = [], []
    per_item = matrix.labels_per_item()
    longest = int(per_item.max()) if len(per_item) else 0
    index = np.arange(len(rows))
    for offset in range(1, longest):
        same = rows[offset:] == rows[:-offset]
        first = index[:-offset][same]
        firsts.append(first)
        seconds.append(first + offset)
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(firsts), np.concatenate(seconds)


@dataclass(frozen=True)
class PairTables:
    """The annotator pairs that share at least one item, ordered by (a, b) column: the
    columns ``a`` < ``b``, ``n_items`` shared and each pair's confusion table (pairs × k × k,
    rows: a's label, columns: b's)."""

    a: np.ndarray
    b: np.ndarray
    n_items: np.ndarray
    confusion: np.ndarray

    def __len__(self) -> int:
        return len(self.a)


def pair_tables(matrix: LabelMatrix) -> PairTables:
    """The confusion table of every annotator pair that shares items, from the labels' pair
    keys (one ``np.unique`` over (pair, cell) keys; pairs without a shared item never appear)."""
    k = max(matrix.n_categories, 1)
    n = len(matrix.annotators)
    first, second = shared_label_pairs(matrix)
    pair = matrix.cols[first] * n + matrix.cols[second]
    cell = matrix.values[first] * k + matrix.values[second]
    keys, counts = np.unique(pair * (k * k) + cell, return_counts=True)
    pair_of_key = keys // (k * k)
    pairs, position = np.unique(pair_of_key, return_inverse=True)
    confusion = np.zeros((len(pairs), k * k), dtype=np.int64)
    confusion[position, keys % (k * k)] = counts
    confusion = confusion.reshape(len(pairs), k, k)
    if not matrix.n_categories:
        confusion = confusion[:, :0, :0]
    return PairTables(
        a=pairs // n if n else pairs,
        b=pairs % n if n else pairs,
        n_items=confusion.sum(axis=(1, 2)),
        confusion=confusion,
    )


def pairwise_cohen_kappa(
    matrix: LabelMatrix, *, only: np.ndarray | None = None, tables: PairTables | None = None
) -> list[PairAgreement]:
    """Cohen's κ and raw agreement for every pair of annotators that share at least one item
    (``only``: just these positions of :func:`pair_tables`' pairs, given as ``tables``)."""
    tables = pair_tables(matrix) if tables is None else tables
    chosen = np.arange(len(tables)) if only is None else np.asarray(only, dtype=np.int64)
    out: list[PairAgreement] = []
    for a, b, n, table in zip(
        tables.a[chosen].tolist(),
        tables.b[chosen].tolist(),
        tables.n_items[chosen].tolist(),
        tables.confusion[chosen],
        strict=True,
    ):
        out.append(
            PairAgreement(
                annotator_a=matrix.annotators[a],
                annotator_b=matrix.annotators[b],
                n_items=n,
                percent_agreement=float(np.trace(table) / n),
                kappa=cohen_kappa_from_confusion(table),
                confusion=table,
            )
        )
    return out


def weighted_kappa_from_confusion(table: np.ndarray, *, weights: str = "quadratic") -> Stat:
    """Cohen's weighted κ from a square table of counts whose categories are ordered.

    κ_w = 1 − Σ w·O / Σ w·E with disagreement weights w_ij = |i−j|/(k−1) (``linear``) or
    (|i−j|/(k−1))² (``quadratic``), O the observed shares, E the shares expected from the two
    annotators' marginals. A near miss (3 vs 4 on a 0–4 scale) costs less than a far one;
    quadratic κ_w is close to an interval α on the same data.
    """
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be linear or quadratic, not {weights!r}")
    table = np.asarray(table, dtype=np.float64)
    total = table.sum()
    if total == 0:
        return Undefined("the two annotators labelled no item in common")
    k = table.shape[0]
    if k < 2:
        return Undefined(ONE_CATEGORY)
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / (k - 1)
    w = distance if weights == "linear" else distance**2
    observed = table / total
    expected = np.outer(table.sum(axis=1) / total, table.sum(axis=0) / total)
    chance = float((w * expected).sum())
    if chance <= 0:
        return Undefined(ONE_CATEGORY)
    return float(1 - (w * observed).sum() / chance)


def mean_pairwise_weighted_kappa(matrix: LabelMatrix, *, weights: str = "quadratic") -> Stat:
    """Weighted κ of every pair of annotators who share items (categories in
    ``matrix.categories`` order), averaged with each pair weighted by its shared items;
    undefined when no pair has a defined κ_w."""
    total, n_total = 0.0, 0
    for pair in pairwise_cohen_kappa(matrix):
        value = weighted_kappa_from_confusion(pair.confusion, weights=weights)
        if isinstance(value, Undefined):
            continue
        total += value * pair.n_items
        n_total += pair.n_items
    if not n_total:
        return Undefined("no pair of annotators has a defined weighted κ on shared items")
    return total / n_total
