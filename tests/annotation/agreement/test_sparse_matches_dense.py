"""The sparse label matrix gives the numbers the dense items × annotators table gave: every
statistic checked against a dense reference (the former implementation, kept here) on random
matrices with missing labels, annotators who labelled nothing and items nobody labelled."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import agreement as ag
from annotation.agreement.kappa_ci import kappa_of_tables, mean_cohen_kappa_bootstrap_ci


def _random_matrix(seed: int, n_items: int, n_annotators: int, k: int, p_missing: float):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_items):
        truth = rng.integers(k)
        row = [
            None
            if rng.random() < p_missing
            else int(truth if rng.random() < 0.7 else rng.integers(k))
            for _ in range(n_annotators)
        ]
        rows.append(row)
    rows.append([None] * n_annotators)  # an item nobody labelled
    for row in rows:
        row.append(None)  # an annotator who labelled nothing
    return ag.LabelMatrix.from_rows(rows, categories=range(k))


# --- the dense reference ---------------------------------------------------------------------


def _dense_value_counts(codes, k):
    counts = np.zeros((codes.shape[0], max(k, 1)), dtype=np.int64)
    rows, cols = np.nonzero(codes >= 0)
    np.add.at(counts, (rows, codes[rows, cols]), 1)
    return counts[:, :k]


def _dense_pairs(codes, k):
    out = []
    labelled = codes >= 0
    for i in range(codes.shape[1]):
        for j in range(i + 1, codes.shape[1]):
            shared = labelled[:, i] & labelled[:, j]
            if shared.any():
                out.append((i, j, ag.confusion_matrix(codes[shared, i], codes[shared, j], k)))
    return out


def _dense_leave_one_out(codes, k):
    counts = _dense_value_counts(codes, k)
    out = []
    for a in range(codes.shape[1]):
        own = codes[:, a]
        mine = own >= 0
        others = counts[mine].copy()
        others[np.arange(len(others)), own[mine]] -= 1
        top = others.max(axis=1) if len(others) else np.zeros(0)
        tie = (top > 0) & ((others == top[:, None]).sum(axis=1) > 1)
        majority = np.where((top > 0) & ~tie, others.argmax(axis=1) if len(others) else 0, -1)
        has_others = others.sum(axis=1) > 0
        compared = has_others & ~tie
        out.append(
            (
                int(mine.sum()),
                int(compared.sum()),
                int((majority[compared] == own[mine][compared]).sum()),
                int((has_others & tie).sum()),
                int((~has_others).sum()),
            )
        )
    return out


def _dense_mean_kappa_ci(codes, k, n_resamples, seed):
    codes = codes[(codes >= 0).sum(axis=1) >= 2]
    n = len(codes)
    weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=n_resamples)
    total = np.zeros(n_resamples)
    defined = np.zeros(n_resamples)
    for i in range(codes.shape[1]):
        for j in range(i + 1, codes.shape[1]):
            shared = np.flatnonzero((codes[:, i] >= 0) & (codes[:, j] >= 0))
            if not len(shared):
                continue
            onehot = np.zeros((len(shared), k * k))
            onehot[np.arange(len(shared)), codes[shared, i] * k + codes[shared, j]] = 1.0
            kappa = kappa_of_tables((weights[:, shared] @ onehot).reshape(n_resamples, k, k))
            ok = np.isfinite(kappa)
            total[ok] += kappa[ok]
            defined += ok
    values = np.where(defined > 0, total / np.maximum(defined, 1), np.nan)
    ok = np.isfinite(values)
    return tuple(np.percentile(values[ok], [2.5, 97.5]))


# --- the comparison --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "n_items", "n_annotators", "k", "p_missing"),
    [(1, 30, 3, 2, 0.2), (2, 60, 6, 3, 0.5), (3, 25, 9, 4, 0.7), (4, 80, 4, 2, 0.0)],
)
def test_every_statistic_matches_the_dense_computation(seed, n_items, n_annotators, k, p_missing):
    matrix = _random_matrix(seed, n_items, n_annotators, k, p_missing)
    codes = matrix.codes
    assert codes.shape == (n_items + 1, n_annotators + 1)
    assert matrix.n_labels == int((codes >= 0).sum())
    # the dense round trip gives back the same coordinates
    again = ag.LabelMatrix(matrix.items, matrix.annotators, matrix.categories, codes)
    assert (again.rows == matrix.rows).all() and (again.values == matrix.values).all()

    counts = _dense_value_counts(codes, k)
    assert (matrix.value_counts() == counts).all()
    dist = ag.label_distribution(matrix)
    for a in range(codes.shape[1]):
        col = codes[:, a]
        assert dist["by_annotator"][a].tolist() == np.bincount(col[col >= 0], minlength=k).tolist()

    pairs = ag.pairwise_cohen_kappa(matrix)
    dense = _dense_pairs(codes, k)
    assert [(p.annotator_a, p.annotator_b) for p in pairs] == [(i, j) for i, j, _ in dense]
    for pair, (_, _, table) in zip(pairs, dense, strict=True):
        assert (pair.confusion == table).all()
        assert pair.n_items == table.sum()
        assert pair.kappa == ag.cohen_kappa_from_confusion(table)

    loo = ag.leave_one_out(matrix)
    assert [
        (r.n_items, r.n_compared, r.n_agree, r.n_others_tied, r.n_no_others) for r in loo
    ] == _dense_leave_one_out(codes, k)

    pairable = counts[counts.sum(axis=1) >= 2]
    assert ag.fleiss_kappa(matrix) == ag.fleiss_kappa_from_counts(pairable)
    assert ag.gwet_ac1(matrix) == ag.gwet_ac1_from_counts(counts, max(k, 2)).value
    per_item = (pairable * (pairable - 1)).sum(axis=1) / (
        pairable.sum(axis=1) * (pairable.sum(axis=1) - 1)
    )
    assert ag.percent_agreement(matrix) == pytest.approx(per_item.mean(), abs=1e-15)

    majority = ag.majority_labels(matrix)
    assert (majority.counts == counts).all()

    ci = mean_cohen_kappa_bootstrap_ci(matrix, n_resamples=60, seed=seed)
    low, high = _dense_mean_kappa_ci(codes, k, 60, seed)
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))

    keep = np.arange(len(matrix.items)) % 3 != 0
    sub = matrix.subset(keep)
    assert (sub.codes == codes[keep]).all()


def test_a_matrix_too_large_for_a_dense_table_still_gives_every_statistic():
    """Items × annotators past the dense limit: the statistics read the coordinates only."""
    n_items, per_item = 60_000, 3
    n_annotators = n_items // 100 * per_item  # 108 million cells dense
    rng = np.random.default_rng(0)
    triples = []
    for i in range(n_items):
        block = (i // 100) * per_item
        truth = rng.integers(2)
        for s in range(per_item):
            label = int(truth if rng.random() < 0.85 else 1 - truth)
            triples.append((i, block + s, label))
    matrix = ag.LabelMatrix.from_triples(triples)
    with pytest.raises(ValueError, match="too large for a dense table"):
        _ = matrix.codes
    assert 0.4 < ag.krippendorff_alpha(matrix) < 0.7
    assert len(ag.pairwise_cohen_kappa(matrix)) == 3 * (n_items // 100)
    assert len(ag.leave_one_out(matrix)) == n_annotators
    ci = mean_cohen_kappa_bootstrap_ci(matrix, n_resamples=20, seed=0)
    assert ci.low <= ci.high
