"""The numbers every pack results page shares (pure: numpy through :mod:`judging.stats`, no
Django): instances, cells with a 95% bootstrap CI over instances, comparison tables whose
generators are ranked on one column with paired tests between neighbours, and curves.

A **cell** is the mean of per-instance values, or (several *strata*, e.g. the tasks of a
LongProc level) the unweighted mean of the strata's means. Its CI is the percentile bootstrap
over instances: one stratum is :func:`judging.stats.bootstrap.bootstrap_mean_ci` (How2Score's
own); several strata are resampled within each stratum (:func:`resample_indices`,
:func:`percentile_interval`), so every stratum stays in the average.

**Neighbours** (as the How2Score rankings, :func:`judging.stats.how2score.neighbour_tests`):
generators sorted by the table's ``rank_by`` column, each compared with the next one down on
the instances both have (paired by ``item``): the paired bootstrap difference with its CI
(:func:`judging.stats.bootstrap.paired_bootstrap`; stratified like the cell when it has
strata), p from McNemar's exact test when every value is 0/1 in one stratum
(:func:`judging.stats.significance.mcnemar`), else from a paired sign-flip permutation test
(:func:`sign_flip_p`; the bootstrap's shifted p would call two identical differences
'significant'); Holm's
adjustment over the k − 1 tests of the table (:func:`judging.stats.significance.holm_adjust`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from annotation.agreement import Undefined
from core.lazy import lazy_module
from judging.stats.bootstrap import (
    PAIRED_METHOD,
    bootstrap_cells,
    bootstrap_mean_ci,
    bootstrap_proportion_ci,
    paired_bootstrap,
    percentile_interval,
    resample_indices,
)
from judging.stats.significance import holm_adjust, mcnemar

np = lazy_module("numpy")  # imported when a results page computes (core.lazy)
sps = lazy_module("scipy.stats")

ALPHA = 0.05
STRATIFIED_METHOD = (
    "percentile bootstrap over instances, resampled within each stratum (fixed seed); the "
    "value is the unweighted mean of the strata's means"
)
NEIGHBOUR_NOTE = (
    "Generators are ranked on the column marked ▼; each is compared with the next one down on "
    "the instances both were scored on: paired bootstrap of the difference (95% CI), p from "
    "McNemar's exact test for 0/1 outcomes, else from a paired sign-flip permutation test; "
    "Holm-adjusted over the k − 1 comparisons of the table. 'differs' means adjusted p < 0.05."
)

# values of one cell: {stratum: {item: value}}
Strata = Mapping[str, Mapping[Any, float]]


@dataclass(frozen=True)
class Instance:
    """One scored generation: its generator, the item that pairs it with other generators'
    (``dataset id:source_example_id``), the pack, metrics and breakdown, and the item's
    attributes the page reads (``task``, ``level``, ``worked_example`` …)."""

    generator: str
    item: str
    pack: str
    metrics: Mapping[str, Any]
    breakdown: Mapping[str, Any] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)
    run: int | None = None


@dataclass(frozen=True)
class Bootstrap:
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"n_resamples": self.n_resamples, "confidence": self.confidence, "seed": self.seed}


def _nonempty(strata: Strata) -> dict[str, np.ndarray]:
    return {
        s: np.asarray(list(v.values()), dtype=np.float64)
        for s, v in sorted(strata.items())
        if len(v)
    }


def cell(strata: Strata, boot: Bootstrap, *, scale: float = 1.0) -> dict[str, Any]:
    """``{"value", "low", "high", "n", "strata"}`` (scaled), or ``value`` None and ``why``."""
    groups = _nonempty(strata)
    n = int(sum(len(x) for x in groups.values()))
    if not groups:
        return {"value": None, "low": None, "high": None, "n": 0, "why": "no items"}
    if len(groups) == 1:
        (x,) = groups.values()
        value = float(x.mean())
        options = {
            "n_resamples": boot.n_resamples,
            "confidence": boot.confidence,
            "seed": boot.seed,
        }
        if not boot.n_resamples:
            ci = Undefined("no resamples asked")
        elif _binary(x):  # 0/1: a resample's mean is Bin(n, p) / n, as How2Score's CI
            ci = bootstrap_proportion_ci(int(x.sum()), len(x), **options)
        else:
            ci = bootstrap_mean_ci(x, **options)
    else:
        value = float(np.mean([x.mean() for x in groups.values()]))
        ci = _stratified_ci(groups, boot) if boot.n_resamples else Undefined("no resamples")
    out: dict[str, Any] = {"value": scale * value, "n": n, "strata": len(groups)}
    if isinstance(ci, Undefined):
        out.update(low=None, high=None, ci_why=str(ci.reason))
    else:
        out.update(low=scale * ci.low, high=scale * ci.high)
    return out


def _stratum_means(groups: Mapping[str, np.ndarray], boot: Bootstrap) -> np.ndarray:
    """n_resamples × strata: each stratum's mean over its own resamples (seed + stratum no.)."""
    cols = [
        x[resample_indices(len(x), n_resamples=boot.n_resamples, seed=boot.seed + i)].mean(axis=1)
        for i, x in enumerate(groups.values())
    ]
    return np.column_stack(cols)


def _stratified_ci(groups: Mapping[str, np.ndarray], boot: Bootstrap):
    averages = _stratum_means(groups, boot).mean(axis=1)
    return percentile_interval(
        averages, confidence=boot.confidence, seed=boot.seed, method=STRATIFIED_METHOD
    )


def _binary(*arrays: np.ndarray) -> bool:
    return all(np.isin(a, (0.0, 1.0)).all() for a in arrays)


def paired_test(a: Strata, b: Strata, boot: Bootstrap, *, scale: float = 1.0) -> dict[str, Any]:
    """a − b on the instances both have, stratum by stratum (strata only one side has are
    left out): ``difference``, ``low``/``high`` (95% CI), ``p_value``, ``test``, ``n_common``."""
    pairs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for s in sorted(set(a) & set(b)):
        common = sorted(set(a[s]) & set(b[s]), key=str)
        if common:
            pairs[s] = (
                np.asarray([a[s][i] for i in common], dtype=np.float64),
                np.asarray([b[s][i] for i in common], dtype=np.float64),
            )
    n_common = int(sum(len(x) for x, _ in pairs.values()))
    if not pairs:
        return {"n_common": 0, "difference": None, "p_value": None, "why": "no items in common"}
    resamples = max(boot.n_resamples, 1)
    if len(pairs) == 1:
        ((xa, xb),) = pairs.values()
        if _binary(xa, xb):
            difference, ci = _binary_difference(xa - xb, boot, resamples)
        else:
            diff = paired_bootstrap(
                xa, xb, n_resamples=resamples, confidence=boot.confidence, seed=boot.seed
            )
            difference, ci = diff.difference, diff.ci
    else:
        difference, ci = _stratified_paired(pairs, Bootstrap(resamples, boot.confidence, boot.seed))
    if len(pairs) == 1 and _binary(xa, xb):
        p, name = mcnemar(xa.astype(bool), xb.astype(bool)).p_value, "McNemar exact"
    else:
        p = sign_flip_p(pairs, seed=boot.seed)
        name = "paired sign-flip permutation" + (" (within strata)" if len(pairs) > 1 else "")
    out: dict[str, Any] = {
        "n_common": n_common,
        "difference": scale * difference,
        "p_value": p,
        "test": name,
    }
    if boot.n_resamples and not isinstance(ci, Undefined):
        out.update(low=scale * ci.low, high=scale * ci.high)
    else:
        out.update(low=None, high=None)
    return out


def _binary_difference(d: np.ndarray, boot: Bootstrap, resamples: int):
    """The mean of 0/1 differences (−1, 0, 1) and its paired bootstrap CI: resampling the
    items is one multinomial draw over the three kinds (:func:`bootstrap_cells`)."""
    cells = [int((d == -1).sum()), int((d == 0).sum()), int((d == 1).sum())]
    draws = bootstrap_cells(cells, n_resamples=resamples, seed=boot.seed)
    means = (draws[:, 2] - draws[:, 0]) / len(d)
    ci = percentile_interval(
        means, confidence=boot.confidence, seed=boot.seed, method=PAIRED_METHOD
    )
    return float(d.mean()), ci


def _stratified_paired(pairs: Mapping[str, tuple[np.ndarray, np.ndarray]], boot: Bootstrap):
    """The difference of strata-averaged means and its CI (instances resampled within each
    stratum, as :func:`paired_bootstrap` does over one)."""
    diffs = {s: xa - xb for s, (xa, xb) in pairs.items()}
    observed = float(np.mean([d.mean() for d in diffs.values()]))
    resampled = _stratum_means(diffs, boot).mean(axis=1)
    ci = percentile_interval(
        resampled, confidence=boot.confidence, seed=boot.seed, method=PAIRED_METHOD
    )
    return observed, ci


def sign_flip_p(
    pairs: Mapping[str, tuple[np.ndarray, np.ndarray]], *, seed: int, n_resamples: int = 1000
) -> float:
    """Two-sided p of a paired sign-flip permutation test of the strata-averaged mean
    difference: under the null each instance's two values are exchangeable, so each difference
    keeps or flips its sign. Exact (every sign pattern) with at most 12 non-zero differences,
    else ``n_resamples`` random patterns (fixed seed; p = (1 + hits) / (1 + B)). Unlike the
    bootstrap's shifted p it is 1 with a single differing instance."""
    weights = np.concatenate(
        [np.full(len(xa), 1 / (len(pairs) * len(xa))) for xa, _ in pairs.values()]
    )
    wd = weights * np.concatenate([xa - xb for xa, xb in pairs.values()])
    wd = wd[wd != 0]
    if not len(wd):
        return 1.0
    observed = abs(wd.sum()) - 1e-12
    if len(wd) <= 12:
        patterns = 1 - 2 * ((np.arange(2 ** len(wd))[:, None] >> np.arange(len(wd))) & 1)
        return float((np.abs(patterns @ wd) >= observed).mean())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 200):  # bounded memory: 200 × n signs at a time
        size = min(200, n_resamples - start)
        signs = np.where(rng.random((size, len(wd))) < 0.5, -1.0, 1.0)
        hits += int((np.abs(signs @ wd) >= observed).sum())
    return (1 + hits) / (1 + n_resamples)


def neighbour_tests(
    ranked: Sequence[str], data: Mapping[str, Strata], boot: Bootstrap, *, scale: float = 1.0
) -> list[dict[str, Any]]:
    """Each generator of ``ranked`` against the next one, Holm-adjusted over the list."""
    tests = [
        {"generator_a": a, "generator_b": b, **paired_test(data[a], data[b], boot, scale=scale)}
        for a, b in pairwise(ranked)
    ]
    testable = [t for t in tests if t["p_value"] is not None]
    for entry, p in zip(testable, holm_adjust([t["p_value"] for t in testable]), strict=True):
        entry["p_holm"] = p
        entry["significant"] = bool(p < ALPHA)
    for entry in tests:
        entry.setdefault("p_holm", None)
        entry.setdefault("significant", False)
    return tests


def comparison_table(
    *,
    table_id: str,
    title: str,
    caption: str,
    columns: Sequence[tuple[str, str]],
    data: Mapping[str, Mapping[str, Strata]],
    rank_by: str,
    boot: Bootstrap,
    scale: float = 1.0,
    digits: int = 3,
) -> dict[str, Any]:
    """Rows = generators (``data[generator][column] = strata``), ranked on ``rank_by`` (best
    first; no value last), each cell with its CI; ``neighbours`` tested on ``rank_by``."""
    rows = [
        {
            "generator": g,
            "cells": {key: cell(data[g].get(key, {}), boot, scale=scale) for key, _ in columns},
        }
        for g in data
    ]
    rows.sort(
        key=lambda r: (
            r["cells"][rank_by]["value"] is None,
            -(r["cells"][rank_by]["value"] or 0.0),
            r["generator"],
        )
    )
    for i, row in enumerate(rows):
        row["rank"] = i + 1
    ranked = [r["generator"] for r in rows if r["cells"][rank_by]["value"] is not None]
    column_data = {g: data[g].get(rank_by, {}) for g in ranked}
    return {
        "id": table_id,
        "title": title,
        "caption": caption,
        "columns": [{"key": k, "label": label} for k, label in columns],
        "rank_by": rank_by,
        "digits": digits,
        "scale": scale,
        "rows": rows,
        "neighbours": neighbour_tests(ranked, column_data, boot, scale=scale),
    }


def curve(
    *,
    curve_id: str,
    title: str,
    x_label: str,
    y_label: str,
    data: Mapping[str, Mapping[float, Strata]],
    boot: Bootstrap,
    x_names: Mapping[float, str] | None = None,
    scale: float = 1.0,
    log_x: bool = False,
    digits: int = 3,
    y_integer: bool = False,
) -> dict[str, Any]:
    """One series per generator: ``data[generator][x] = strata`` → points ``{x, label, cell}``
    in x order (points with no instance left out)."""
    names = x_names or {}
    series = []
    for g in sorted(data):
        points = []
        for x in sorted(data[g]):
            c = cell(data[g][x], boot, scale=scale)
            if c["value"] is not None:
                points.append({"x": x, "label": names.get(x, f"{x:g}"), **c})
        series.append({"generator": g, "points": points})
    return {
        "id": curve_id,
        "title": title,
        "x_label": x_label,
        "y_label": y_label,
        "log_x": log_x,
        "y_integer": y_integer,
        "digits": digits,
        "series": series,
    }


def metric_values(instances: Sequence[Instance], metric: str) -> dict[Any, float]:
    """``{item: value}`` of ``metric`` over the instances where it is a number."""
    out = {}
    for inst in instances:
        value = inst.metrics.get(metric)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[inst.item] = float(value)
    return out
