"""Bootstrap CIs of Fleiss' κ and Cohen's κ (per pair and mean over pairs): reproducible with
a seed, containing the point estimate, equal to the percentiles of κ recomputed by hand on each
resample; in the agreement report and its text."""

from __future__ import annotations

import re

import numpy as np
import pytest

from annotation import agreement as ag
from annotation.agreement.alpha import count_patterns
from annotation.agreement.kappa_ci import (
    cohen_kappa_bootstrap_ci,
    fleiss_kappa_bootstrap_ci,
    kappa_of_tables,
    mean_cohen_kappa_bootstrap_ci,
)
from annotation.agreement_report import build_report, report_to_text
from annotation.label_file import LabelRow


def _matrix(seed=5, n_items=80, annotators=("a", "b", "c"), p_missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.35
    triples = []
    for i in range(n_items):
        for a in annotators:
            if rng.random() < p_missing:
                continue
            label = truth[i] if rng.random() < 0.85 else not truth[i]
            triples.append((f"item{i}", a, bool(label)))
    return ag.LabelMatrix.from_triples(triples, categories=(False, True))


def _percentiles(values):
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return tuple(np.percentile(values, [2.5, 97.5]))


def test_fleiss_ci_equals_kappa_of_each_resample_by_hand():
    matrix = _matrix()
    counts = matrix.value_counts()
    ci = fleiss_kappa_bootstrap_ci(counts, n_resamples=300, seed=11)
    assert ci == fleiss_kappa_bootstrap_ci(counts, n_resamples=300, seed=11)
    assert ci != fleiss_kappa_bootstrap_ci(counts, n_resamples=300, seed=12)
    point = ag.fleiss_kappa(matrix)
    assert ci.low <= point <= ci.high and ci.n_resamples == 300 and ci.seed == 11
    # by hand: the same multinomial draws over the count patterns, κ from the expanded table
    pairable = counts[counts.sum(axis=1) >= 2]
    patterns, frequency = count_patterns(pairable)
    n = int(frequency.sum())
    draws = np.random.default_rng(11).multinomial(n, frequency / n, size=300)
    by_hand = [ag.fleiss_kappa_from_counts(np.repeat(patterns, w, axis=0)) for w in draws]
    low, high = _percentiles(by_hand)
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))


def test_cohen_pair_ci_by_hand_and_vectorised_kappa():
    table = np.array([[30, 6], [9, 25]])
    ci = cohen_kappa_bootstrap_ci(table, n_resamples=400, seed=2)
    point = ag.cohen_kappa_from_confusion(table)
    assert ci.low <= point <= ci.high
    draws = np.random.default_rng(2).multinomial(70, table.reshape(-1) / 70, size=400)
    by_hand = [ag.cohen_kappa_from_confusion(d.reshape(2, 2)) for d in draws]
    low, high = _percentiles([np.nan if isinstance(k, ag.Undefined) else k for k in by_hand])
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))
    # the vectorised κ is the scalar one; undefined tables are nan
    assert kappa_of_tables(table[None])[0] == pytest.approx(point)
    assert np.isnan(kappa_of_tables(np.array([[[5, 0], [0, 0]]]))[0])
    assert isinstance(cohen_kappa_bootstrap_ci(np.array([[4, 0], [0, 0]])), ag.Undefined)


def test_mean_pairwise_kappa_ci_by_hand():
    matrix = _matrix(seed=9, n_items=40, annotators=("a", "b", "c", "d"), p_missing=0.3)
    ci = mean_cohen_kappa_bootstrap_ci(matrix, n_resamples=100, seed=4)
    kappas = [p.kappa for p in ag.pairwise_cohen_kappa(matrix)]
    point = float(np.mean([k for k in kappas if not isinstance(k, ag.Undefined)]))
    assert ci.low <= point <= ci.high
    keep = (matrix.codes >= 0).sum(axis=1) >= 2
    codes = matrix.codes[keep]
    n = len(codes)
    weights = np.random.default_rng(4).multinomial(n, np.full(n, 1 / n), size=100)
    by_hand = []
    for w in weights:
        rows = np.repeat(np.arange(n), w)
        resampled = ag.LabelMatrix(
            tuple(range(len(rows))), matrix.annotators, matrix.categories, codes[rows]
        )
        ks = [p.kappa for p in ag.pairwise_cohen_kappa(resampled)]
        ks = [k for k in ks if not isinstance(k, ag.Undefined)]
        by_hand.append(np.mean(ks) if ks else np.nan)
    low, high = _percentiles(by_hand)
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))


def test_report_carries_kappa_cis_and_prints_them():
    matrix = _matrix()
    rows = [
        LabelRow(str(matrix.items[i]), str(matrix.annotators[a]), bool(matrix.codes[i, a]))
        for i in range(len(matrix.items))
        for a in range(len(matrix.annotators))
        if matrix.codes[i, a] >= 0
    ]
    report = build_report(rows, n_resamples=200, seed=1)
    for stat in (report["fleiss_kappa"], report["cohen_kappa"]["mean"]):
        assert stat["ci"]["low"] <= stat["value"] <= stat["ci"]["high"]
        assert stat["ci"]["n_resamples"] == 200 and "bootstrap" in stat["ci"]["method"]
    for pair in report["cohen_kappa"]["pairs"]:
        assert pair["kappa"]["ci"]["low"] <= pair["kappa"]["value"] <= pair["kappa"]["ci"]["high"]
    assert build_report(rows, n_resamples=200, seed=1) == report
    text = report_to_text(report)
    assert re.search(r"Fleiss' kappa: -?\d\.\d{3}\s+\[95% CI", text)
    assert re.search(r"Cohen's kappa, mean over pairs: -?\d\.\d{3}\s+\[95% CI", text)
    without = build_report(rows, n_resamples=0)
    assert "ci" not in without["fleiss_kappa"] and "ci" not in without["cohen_kappa"]["mean"]
    one = build_report([LabelRow("i", "a", True), LabelRow("j", "a", False)])
    assert one["fleiss_kappa"]["value"] is None and "ci" not in one["fleiss_kappa"]
