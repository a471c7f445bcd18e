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


# A dense ``codes`` table (items × annotators) is built on request only up to this many cells
# (8 bytes each); every statistic reads the coordinates instead.
DENSE_MAX_CELLS = 50_000_000


class LabelMatrix:
    """Items × annotators of category codes, stored sparse: one entry per label.

    ``rows`` (item index), ``cols`` (annotator index) and ``values`` (category code) are
    parallel int64 arrays sorted by item, then annotator, so memory grows with the number of
    labels, not with items × annotators. ``codes`` gives the dense table (``-1`` = not
    labelled) for small data. ``LabelMatrix(items, annotators, categories, codes)`` builds one
    from such a dense table.
    """

    __slots__ = ("annotators", "categories", "cols", "items", "rows", "values")

    def __init__(
        self,
        items: Sequence[Hashable],
        annotators: Sequence[Hashable],
        categories: Sequence[Hashable],
        codes: np.ndarray | None = None,
        *,
        rows: np.ndarray | None = None,
        cols: np.ndarray | None = None,
        values: np.ndarray | None = None,
    ) -> None:
        self.items = tuple(items)
        self.annotators = tuple(annotators)
        self.categories = tuple(categories)
        if codes is not None:
            codes = np.asarray(codes, dtype=np.int64).reshape(len(self.items), len(self.annotators))
            rows, cols = np.nonzero(codes >= 0)
            values = codes[rows, cols]
        empty = np.zeros(0, dtype=np.int64)
        self.rows = empty if rows is None else np.asarray(rows, dtype=np.int64)
        self.cols = empty if cols is None else np.asarray(cols, dtype=np.int64)
        self.values = empty if values is None else np.asarray(values, dtype=np.int64)

    def __repr__(self) -> str:
        return (
            f"LabelMatrix({len(self.items)} items, {len(self.annotators)} annotators, "
            f"{self.n_labels} labels, categories={self.categories!r})"
        )

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
        item_index: dict[Hashable, int] = {}
        annotator_index: dict[Hashable, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        labels: list[Hashable] = []
        for item_id, annotator_id, label in triples:
            rows.append(item_index.setdefault(item_id, len(item_index)))
            cols.append(annotator_index.setdefault(annotator_id, len(annotator_index)))
            labels.append(label)
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
        n_annotators = len(annotator_index)
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        v = np.fromiter(map(category_index.__getitem__, labels), np.int64, len(labels))
        del rows, cols, labels
        flat = r * n_annotators + c
        order = np.argsort(flat, kind="stable")
        flat = flat[order]
        repeated = np.flatnonzero(flat[1:] == flat[:-1])
        if len(repeated):
            dup = int(flat[repeated[0]])
            items, annotators = list(item_index), list(annotator_index)
            raise ValueError(
                f"item {items[dup // n_annotators]!r} was labelled twice by annotator "
                f"{annotators[dup % n_annotators]!r}"
            )
        return cls(
            tuple(item_index),
            tuple(annotator_index),
            categories,
            rows=r[order],
            cols=c[order],
            values=v[order],
        )

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
        # Keep every item and annotator, even those without a single label, at their positions.
        n_items = len(rows)
        n_annotators = max((len(r) for r in rows), default=0)
        item_ids = np.asarray(matrix.items, dtype=np.int64)
        annotator_ids = np.asarray(matrix.annotators, dtype=np.int64)
        r = item_ids[matrix.rows] if len(matrix.rows) else matrix.rows
        c = annotator_ids[matrix.cols] if len(matrix.cols) else matrix.cols
        order = np.argsort(r * n_annotators + c, kind="stable")
        return cls(
            tuple(range(n_items)),
            tuple(range(n_annotators)),
            matrix.categories,
            rows=r[order],
            cols=c[order],
            values=matrix.values[order],
        )

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    @property
    def n_labels(self) -> int:
        return len(self.values)

    @property
    def codes(self) -> np.ndarray:
        """The dense items × annotators table (``-1`` = not labelled), for small data only: a
        ``ValueError`` past :data:`DENSE_MAX_CELLS` cells."""
        cells = len(self.items) * len(self.annotators)
        if cells > DENSE_MAX_CELLS:
            raise ValueError(
                f"{len(self.items)} items × {len(self.annotators)} annotators is too large for a "
                "dense table; read the coordinates (rows, cols, values)"
            )
        codes = np.full((len(self.items), len(self.annotators)), MISSING, dtype=np.int64)
        codes[self.rows, self.cols] = self.values
        return codes

    def labels_per_item(self) -> np.ndarray:
        """How many annotators labelled each item."""
        return np.bincount(self.rows, minlength=len(self.items))

    def labels_per_annotator(self) -> np.ndarray:
        """How many items each annotator labelled."""
        return np.bincount(self.cols, minlength=len(self.annotators))

    def value_counts(self) -> np.ndarray:
        """Items × categories: how many annotators gave each category to each item."""
        k = self.n_categories
        n_items = len(self.items)
        if not k:
            return np.zeros((n_items, 0), dtype=np.int64)
        return np.bincount(self.rows * k + self.values, minlength=n_items * k).reshape(n_items, k)

    def subset(self, item_mask: np.ndarray) -> LabelMatrix:
        """The same matrix restricted to some items (categories and annotators unchanged)."""
        item_mask = np.asarray(item_mask, dtype=bool)
        kept = np.flatnonzero(item_mask)
        items = tuple(self.items[i] for i in kept)
        new_index = np.cumsum(item_mask) - 1
        keep = item_mask[self.rows]
        return LabelMatrix(
            items,
            self.annotators,
            self.categories,
            rows=new_index[self.rows[keep]],
            cols=self.cols[keep],
            values=self.values[keep],
        )


def _sorted_categories(values: set[Hashable]) -> tuple[Hashable, ...]:
    def key(v):
        if isinstance(v, bool):
            return (1, int(v), "")
        if isinstance(v, (int, float, np.integer, np.floating)):
            return (0, float(v), "")
        return (2, 0.0, str(v))

    return tuple(sorted(values, key=key))


def check_pairable(matrix: LabelMatrix, *, chance_corrected: bool = True) -> Undefined | None:
    """The undefined cases shared by the multi-annotator statistics (``None``: none applies).
    A chance-corrected statistic (α, κ, AC1) also needs two items labelled twice or more: on one
    it is 0 or 1 whatever the annotators do; raw percent agreement does not."""
    if not matrix.n_labels:
        return Undefined(NO_LABELS)
    if int((matrix.labels_per_annotator() > 0).sum()) < 2:
        return Undefined(ONE_ANNOTATOR)
    n_shared = int((matrix.labels_per_item() >= 2).sum())
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
    n = len(matrix.annotators)
    if k:
        flat = matrix.cols * k + matrix.values
        by_annotator = np.bincount(flat, minlength=n * k).reshape(n, k)
    else:
        by_annotator = np.zeros((n, 0), dtype=np.int64)
    return {"overall": by_annotator.sum(axis=0), "by_annotator": by_annotator}
