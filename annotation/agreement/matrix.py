"""Label matrices, the statistic type and the undefined cases shared by every statistic.

A :class:`LabelMatrix` holds items (rows) × annotators (columns) of integer category codes,
``-1`` (:data:`MISSING`) where an annotator did not label an item. Labels are nominal
categories of any kind (``"has_failure"``, ``"3"``, ``True``); the matrix keeps the mapping.

A statistic is a :data:`Stat`: a ``float`` or an :class:`Undefined` carrying the reason.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from core.lazy import lazy_module

np = lazy_module("numpy")


MISSING = -1

# Reasons, shared so the report and the tests speak the same words.
NO_LABELS = "no labels"
ONE_ANNOTATOR = "only one annotator"
NO_ITEM_TWICE = "no item was labelled by two or more annotators"
# one shared item: chance agreement is estimated from that item alone, so α, κ and AC1 come out
# as 0 or 1 whatever the annotators do; said instead of shown
ONE_ITEM_IN_COMMON = (
    "1 item in common: it needs at least 2 items labelled by two or more annotators"
)
ONE_CATEGORY = "every label is the same category: no agreement beyond chance to measure"


@dataclass(frozen=True)
class Undefined:
    """A statistic that cannot be computed for this data, with the reason why."""

    reason: str

    def to_json(self) -> dict:
        return {"value": None, "undefined": self.reason}


Stat = float | Undefined


def stat_json(value: Stat) -> dict:
    """``{"value": 0.59}`` or ``{"value": null, "undefined": "reason"}``."""
    if isinstance(value, Undefined):
        return value.to_json()
    return {"value": float(value)}


@dataclass(frozen=True)
class LabelMatrix:
    """Items × annotators of category codes (``-1`` = not labelled)."""

    items: tuple[Hashable, ...]
    annotators: tuple[Hashable, ...]
    categories: tuple[Hashable, ...]
    codes: np.ndarray

    @classmethod
    def from_triples(
        cls,
        triples: Iterable[tuple[Hashable, Hashable, Hashable]],
        *,
        categories: Sequence[Hashable] | None = None,
    ) -> LabelMatrix:
        """Build from ``(item_id, annotator_id, label)`` triples (long format).

        Items and annotators keep their first-seen order. Categories are sorted (numbers
        numerically, then strings) unless ``categories`` gives their order — needed for
        ordinal labels that are words. A repeated (item, annotator) pair is a ``ValueError``.
        """
        columns = list(zip(*triples, strict=True))
        item_ids, annotator_ids, labels = columns if columns else ((), (), ())
        item_index: dict[Hashable, int] = {}
        annotator_index: dict[Hashable, int] = {}
        rows = [item_index.setdefault(x, len(item_index)) for x in item_ids]
        cols = [annotator_index.setdefault(x, len(annotator_index)) for x in annotator_ids]
        if categories is None:
            categories = _sorted_categories(set(labels))
        else:
            categories = tuple(categories)
            unknown = set(labels) - set(categories)
            if unknown:
                raise ValueError(
                    f"labels not among the given categories: {sorted(map(str, unknown))}"
                )
        category_index = {c: i for i, c in enumerate(categories)}
        codes = np.full((len(item_index), len(annotator_index)), MISSING, dtype=np.int64)
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        if len(r):
            flat = r * len(annotator_index) + c
            uniq, counts = np.unique(flat, return_counts=True)
            if (counts > 1).any():
                dup = int(uniq[counts > 1][0])
                items, annotators = list(item_index), list(annotator_index)
                raise ValueError(
                    f"item {items[dup // len(annotators)]!r} was labelled twice by annotator "
                    f"{annotators[dup % len(annotators)]!r}"
                )
            codes[r, c] = np.fromiter(
                map(category_index.__getitem__, labels), np.int64, len(labels)
            )
        return cls(tuple(item_index), tuple(annotator_index), tuple(categories), codes)

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Hashable | None]], **kwargs) -> LabelMatrix:
        """Build from a wide table: one row per item, one column per annotator, ``None`` = missing."""
        triples = [
            (i, a, label)
            for i, row in enumerate(rows)
            for a, label in enumerate(row)
            if label is not None
        ]
        matrix = cls.from_triples(triples, **kwargs)
        # Keep every item and annotator, even those without a single label.
        n_items = len(rows)
        n_annotators = max((len(r) for r in rows), default=0)
        codes = np.full((n_items, n_annotators), MISSING, dtype=np.int64)
        for i, a, label in triples:
            codes[i, a] = matrix.categories.index(label)
        return cls(tuple(range(n_items)), tuple(range(n_annotators)), matrix.categories, codes)

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def value_counts(self) -> np.ndarray:
        """Items × categories: how many annotators gave each category to each item."""
        return _value_counts(self.codes, self.n_categories)

    def subset(self, item_mask: np.ndarray) -> LabelMatrix:
        """The same matrix restricted to some items (categories and annotators unchanged)."""
        item_mask = np.asarray(item_mask, dtype=bool)
        items = tuple(self.items[i] for i in np.flatnonzero(item_mask))
        return LabelMatrix(items, self.annotators, self.categories, self.codes[item_mask])


def _sorted_categories(values: set[Hashable]) -> tuple[Hashable, ...]:
    def key(v):
        if isinstance(v, bool):
            return (1, int(v), "")
        if isinstance(v, (int, float, np.integer, np.floating)):
            return (0, float(v), "")
        return (2, 0.0, str(v))

    return tuple(sorted(values, key=key))


def _value_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    n_items = codes.shape[0]
    counts = np.zeros((n_items, max(n_categories, 1)), dtype=np.int64)
    rows, cols = np.nonzero(codes >= 0)
    np.add.at(counts, (rows, codes[rows, cols]), 1)
    return counts[:, :n_categories] if n_categories else counts[:, :0]


def check_pairable(matrix: LabelMatrix, *, chance_corrected: bool = True) -> Undefined | None:
    """The undefined cases shared by the multi-annotator statistics (``None``: none applies).
    A chance-corrected statistic (α, κ, AC1) also needs two items labelled twice or more: on one
    it is 0 or 1 whatever the annotators do; raw percent agreement does not."""
    labelled = matrix.codes >= 0
    if not labelled.any():
        return Undefined(NO_LABELS)
    if int(labelled.any(axis=0).sum()) < 2:
        return Undefined(ONE_ANNOTATOR)
    n_shared = int((labelled.sum(axis=1) >= 2).sum())
    if not n_shared:
        return Undefined(NO_ITEM_TWICE)
    if n_shared == 1 and chance_corrected:
        return Undefined(ONE_ITEM_IN_COMMON)
    return None


def pairable_counts(matrix: LabelMatrix) -> np.ndarray:
    """Items × categories value counts of the items labelled by two or more annotators."""
    counts = matrix.value_counts()
    return counts[counts.sum(axis=1) >= 2]


def label_distribution(matrix: LabelMatrix) -> dict[str, np.ndarray]:
    """Counts per category: ``overall`` (categories,) and ``by_annotator`` (annotators × categories)."""
    k = matrix.n_categories
    by_annotator = np.zeros((len(matrix.annotators), k), dtype=np.int64)
    for a in range(len(matrix.annotators)):
        col = matrix.codes[:, a]
        by_annotator[a] = np.bincount(col[col >= 0], minlength=k)[:k] if k else []
    return {"overall": by_annotator.sum(axis=0), "by_annotator": by_annotator}
