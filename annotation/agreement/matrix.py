"""Agreement statistics over label matrices: pure numpy, no Django, no ORM.

The input everywhere is a :class:`LabelMatrix`: items (rows) × annotators (columns) of
integer category codes, ``-1`` where an annotator did not label an item. Labels are nominal
categories of any kind (``"has_failure"``, ``"3"``, ``True``); the matrix keeps the mapping.

Every statistic returns a ``float`` or an :class:`Undefined` carrying the reason (a single
annotator, every label identical, no item labelled twice, no labels at all) — never ``nan``
and never an exception for such data.

Statistics (each function's docstring says what it measures and how to read it):

- :func:`krippendorff_alpha` and :func:`alpha_bootstrap_ci` — chance-corrected reliability
  (through the ``krippendorff`` package), with a unit-resampling bootstrap interval.
- :func:`percent_agreement` — raw share of agreeing annotator pairs.
- :func:`cohen_kappa` / :func:`pairwise_cohen_kappa` — chance-corrected agreement of two annotators.
- :func:`fleiss_kappa` — chance-corrected agreement of many annotators.
- :func:`majority_labels` — the majority label per item, with ties reported.
- :func:`leave_one_out` — each annotator against the majority of the others.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")

MISSING = -1

# Reasons, shared so the report and the tests speak the same words.
NO_LABELS = "no labels"
ONE_ANNOTATOR = "only one annotator"
NO_ITEM_TWICE = "no item was labelled by two or more annotators"
ONE_CATEGORY = "every label is the same category, so agreement beyond chance is undefined"


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
        columns = list(zip(*triples))
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


def _check_pairable(matrix: LabelMatrix) -> Undefined | None:
    """The undefined cases shared by the multi-annotator statistics."""
    labelled = matrix.codes >= 0
    if not labelled.any():
        return Undefined(NO_LABELS)
    if int(labelled.any(axis=0).sum()) < 2:
        return Undefined(ONE_ANNOTATOR)
    if not (labelled.sum(axis=1) >= 2).any():
        return Undefined(NO_ITEM_TWICE)
    return None


def _pairable_counts(matrix: LabelMatrix) -> np.ndarray:
    counts = matrix.value_counts()
    return counts[counts.sum(axis=1) >= 2]


# --- Krippendorff's alpha -------------------------------------------------------------------


def krippendorff_alpha(matrix: LabelMatrix, *, level: Level = "nominal") -> Stat:
    """Krippendorff's α: 1 − observed disagreement / disagreement expected by chance.

    Computed by the ``krippendorff`` package from the items' value counts. Works with any
    number of annotators and missing labels (items labelled once are not pairable and are
    ignored). 1 = perfect agreement, 0 = no better than chance, < 0 = systematic
    disagreement; Krippendorff suggests α ≥ 0.8 for firm conclusions and 0.667 as the lowest
    for tentative ones. ``level``: ``nominal`` (categories: the critical-failure label, the
    first-failure location), ``ordinal`` (ranked categories in ``matrix.categories`` order),
    ``interval`` or ``ratio`` (numeric labels).
    """
    undefined = _alpha_undefined(matrix, level)
    if undefined:
        return undefined
    counts = _pairable_counts(matrix)
    domain = _value_domain(matrix, level)
    value = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    return float(value)


def _alpha_undefined(matrix: LabelMatrix, level: str) -> Undefined | None:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    undefined = _check_pairable(matrix)
    if undefined:
        return undefined
    if int((_pairable_counts(matrix).sum(axis=0) > 0).sum()) < 2:
        return Undefined(ONE_CATEGORY)
    return None


def _count_patterns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an items × categories count table and how often each occurs."""
    base = int(counts.max()) + 1 if counts.size else 1
    if counts.shape[1] * np.log2(base) < 62:
        keys = counts @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        _, first, frequency = np.unique(keys, return_index=True, return_counts=True)
        return counts[first], frequency
    return np.unique(counts, axis=0, return_counts=True)


def _value_domain(matrix: LabelMatrix, level: str) -> np.ndarray:
    if level in ("interval", "ratio"):
        try:
            return np.asarray([float(c) for c in matrix.categories], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{level} level needs numeric labels; got {[str(c) for c in matrix.categories]}"
            ) from None
    return np.arange(matrix.n_categories)


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap interval for α."""

    low: float
    high: float
    confidence: float
    n_resamples: int
    n_degenerate: int  # resamples where α was undefined (one category only), left out
    seed: int


def alpha_bootstrap_ci(
    matrix: LabelMatrix,
    *,
    level: Level = "nominal",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapCI | Undefined:
    """Percentile bootstrap confidence interval for Krippendorff's α.

    Method: the items (units) are resampled with replacement, ``n_resamples`` times, with a
    fixed ``seed`` (same data + same seed = same interval); α is recomputed on each resample
    and the interval is the (1−confidence)/2 and (1+confidence)/2 percentiles. Resamples
    where α is undefined (all pairable labels in one category) are left out and counted.

    Vectorised: α depends on an item only through its vector of category counts, so items
    are grouped by that pattern and a resample is a multinomial draw of pattern counts
    (exactly the distribution of resampling items); every resample's coincidence matrix is
    then one matrix product. Read it as the range of α values the same annotators would
    plausibly produce on another sample of items of this kind.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    undefined = _alpha_undefined(matrix, level)
    if undefined:
        return undefined
    patterns, frequency = _count_patterns(_pairable_counts(matrix))
    n_units = int(frequency.sum())
    rng = np.random.default_rng(seed)
    # Same distribution either way; the cheaper draw: B·P binomials or B·N unit indices.
    if len(patterns) <= max(n_units // 2, 1):
        weights = rng.multinomial(n_units, frequency / n_units, size=n_resamples)
    else:
        pattern_of_unit = np.repeat(np.arange(len(patterns)), frequency)
        draws = pattern_of_unit[rng.integers(0, n_units, size=(n_resamples, n_units))]
        offsets = (np.arange(n_resamples) * len(patterns))[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=n_resamples * len(patterns))
        weights = weights.reshape(n_resamples, len(patterns))
    alphas = _alpha_from_pattern_weights(
        patterns, weights.astype(np.float64), level=level, domain=_value_domain(matrix, level)
    )
    ok = np.isfinite(alphas)
    if not ok.any():
        return Undefined("every bootstrap resample had a single category")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(alphas[ok], [tail, 100 - tail])
    return BootstrapCI(
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_resamples=n_resamples,
        n_degenerate=int((~ok).sum()),
        seed=seed,
    )


def _alpha_from_pattern_weights(
    patterns: np.ndarray, weights: np.ndarray, *, level: str, domain: np.ndarray
) -> np.ndarray:
    """α for each row of ``weights`` (resamples × patterns); ``nan`` where undefined."""
    m = patterns.sum(axis=1).astype(np.float64)  # labels per pattern, all ≥ 2
    n_v = weights @ patterns  # resamples × categories: pairable values per category
    n = n_v.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if level == "nominal":
            # Observed: off-diagonal coincidences = m − Σ c(c−1)/(m−1) per unit.
            within = m - (patterns * (patterns - 1)).sum(axis=1) / (m - 1)
            d_o = weights @ within
            d_e = (n**2 - (n_v**2).sum(axis=1)) / (n - 1)
        else:
            per_unit = (
                patterns[:, :, None] * patterns[:, None, :]
                - patterns[:, :, None] * np.eye(patterns.shape[1])[None]
            ) / (m - 1)[:, None, None]
            o = np.einsum("bp,pij->bij", weights, per_unit)
            e = (
                n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(n_v.shape[1])[None]
            ) / (n - 1)[:, None, None]
            if level == "interval":
                d = ((domain[:, None] - domain[None, :]) ** 2)[None]
            elif level == "ratio":
                total = domain[:, None] + domain[None, :]
                diff = domain[:, None] - domain[None, :]
                ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
                d = (ratio**2)[None]
            else:  # ordinal: squared rank-sum distance that depends on the marginals
                prefix = np.concatenate(
                    [np.zeros((n_v.shape[0], 1)), np.cumsum(n_v, axis=1)], axis=1
                )
                idx = np.arange(n_v.shape[1])
                lo = np.minimum(idx[:, None], idx[None, :])
                hi = np.maximum(idx[:, None], idx[None, :])
                between = prefix[:, hi + 1] - prefix[:, lo]
                d = (between - (n_v[:, lo] + n_v[:, hi]) / 2) ** 2
            d_o = (o * d).sum(axis=(1, 2))
            d_e = (e * d).sum(axis=(1, 2))
        alphas = 1 - d_o / d_e
    alphas[~(d_e > 0)] = np.nan
    return alphas


# --- raw agreement, Fleiss' kappa --------------------------------------------------------------


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
    undefined = _check_pairable(matrix)
    if undefined:
        return undefined
    return float(_per_item_pair_agreement(_pairable_counts(matrix)).mean())


def fleiss_kappa(matrix: LabelMatrix) -> Stat:
    """Fleiss' κ (1971): chance-corrected agreement for many annotators.

    κ = (P̄ − P̄e) / (1 − P̄e), where P̄ is the mean per-item pairwise agreement (as in
    :func:`percent_agreement`) and P̄e = Σ p_j², p_j the share of all labels in category j.
    Fleiss assumed every item has the same number of raters; here items labelled by
    different numbers of annotators are handled by the usual generalisation (each item's
    agreement uses its own m; p_j pools all labels), which equals Fleiss' formula when m is
    constant. Items labelled once are left out. Read like α: 1 perfect, 0 chance level.
    """
    undefined = _check_pairable(matrix)
    if undefined:
        return undefined
    return fleiss_kappa_from_counts(_pairable_counts(matrix))


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


# --- Cohen's kappa ---------------------------------------------------------------------------


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


def pairwise_cohen_kappa(matrix: LabelMatrix) -> list[PairAgreement]:
    """Cohen's κ and raw agreement for every pair of annotators that share at least one item."""
    out: list[PairAgreement] = []
    codes = matrix.codes
    k = matrix.n_categories
    labelled = codes >= 0
    for i in range(codes.shape[1]):
        for j in range(i + 1, codes.shape[1]):
            shared = labelled[:, i] & labelled[:, j]
            n = int(shared.sum())
            if not n:
                continue
            table = confusion_matrix(codes[shared, i], codes[shared, j], k)
            out.append(
                PairAgreement(
                    annotator_a=matrix.annotators[i],
                    annotator_b=matrix.annotators[j],
                    n_items=n,
                    percent_agreement=float(np.trace(table) / n),
                    kappa=cohen_kappa_from_confusion(table),
                    confusion=table,
                )
            )
    return out


# --- majority and leave-one-out --------------------------------------------------------------


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
    out: list[LeaveOneOut] = []
    for a, annotator in enumerate(matrix.annotators):
        own = matrix.codes[:, a]
        mine = own >= 0
        others = counts[mine].copy()
        if k:
            others[np.arange(len(others)), own[mine]] -= 1
        codes, tie = _majority_of_counts(others)
        has_others = others.sum(axis=1) > 0
        compared = has_others & ~tie
        n_compared = int(compared.sum())
        n_agree = int((codes[compared] == own[mine][compared]).sum())
        if not mine.any():
            agreement: Stat = Undefined(f"annotator {annotator!s} labelled no item")
        elif not has_others.any():
            agreement = Undefined("no other annotator labelled this annotator's items")
        elif not n_compared:
            agreement = Undefined("the other annotators tie on every shared item")
        else:
            agreement = n_agree / n_compared
        out.append(
            LeaveOneOut(
                annotator=annotator,
                n_items=int(mine.sum()),
                n_compared=n_compared,
                n_agree=n_agree,
                n_others_tied=int((has_others & tie).sum()),
                n_no_others=int((~has_others).sum()),
                agreement=agreement,
            )
        )
    return out


def label_distribution(matrix: LabelMatrix) -> dict[str, np.ndarray]:
    """Counts per category: ``overall`` (categories,) and ``by_annotator`` (annotators × categories)."""
    k = matrix.n_categories
    by_annotator = np.zeros((len(matrix.annotators), k), dtype=np.int64)
    for a in range(len(matrix.annotators)):
        col = matrix.codes[:, a]
        by_annotator[a] = np.bincount(col[col >= 0], minlength=k)[:k] if k else []
    return {"overall": by_annotator.sum(axis=0), "by_annotator": by_annotator}
