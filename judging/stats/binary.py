"""A binary judge against a binary reference (the human majority, or another judge), with
uncertainty: agreement overall and per reference class, Cohen's κ and Gwet's AC1, each with a
percentile bootstrap CI over items, and the constant-predictor baselines.

The input is the 2×2 confusion table, rows the reference, columns the judge, both in
(``has_failure``, ``no_failure``) order. Every statistic depends on the items only through this
table, so a bootstrap resample of the items is one multinomial draw over its four cells
(:func:`judging.stats.bootstrap.bootstrap_cells`) and all statistics of a report share the
same resamples. κ and AC1 come from their one home, :mod:`annotation.agreement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.agreement import (
    Undefined,
    ac1_weighted,
    cohen_kappa_from_confusion,
    gwet_ac1_from_counts,
    stat_json,
)
from core.lazy import lazy_module
from judging.stats.bootstrap import bootstrap_cells, percentile_interval

np = lazy_module("numpy")

CLASSES = ("has_failure", "no_failure")
# The items of each cell as rating counts (has_failure, no_failure) of the two raters.
CELL_PATTERNS = ((2, 0), (1, 1), (1, 1), (0, 2))


def _patterns() -> np.ndarray:
    return np.array(CELL_PATTERNS, dtype=np.int64)  # numpy imported when first computed


def _ci_json(samples: np.ndarray, confidence: float, seed: int) -> dict[str, Any]:
    return percentile_interval(samples, confidence=confidence, seed=seed).to_json()


def _with_ci(value, samples, confidence, seed, **extra) -> dict[str, Any]:
    out = {**stat_json(value), **extra}
    if not isinstance(value, Undefined) and samples is not None:
        out["ci"] = _ci_json(samples, confidence, seed)
    return out


def _share(k: int, n: int, reason: str):
    return k / n if n else Undefined(reason)


def _ac1(cells: np.ndarray):
    return gwet_ac1_from_counts(np.repeat(_patterns(), cells, axis=0), 2)


def _kappas(draws: np.ndarray) -> np.ndarray:
    out = np.empty(len(draws))
    for i, row in enumerate(draws):
        k = cohen_kappa_from_confusion(row.reshape(2, 2))
        out[i] = np.nan if isinstance(k, Undefined) else k
    return out


def binary_agreement(
    confusion: Sequence[Sequence[int]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    reference: str = "the reference",
) -> dict[str, Any]:
    """Agreement, per-class agreement, κ and AC1 of the judge (columns) with the reference
    (rows), each ``{"value", "ci"}`` (``ci`` left out when ``n_resamples`` is 0)."""
    cells = np.asarray(confusion, dtype=np.int64).reshape(4)
    n = int(cells.sum())
    draws = None
    if n and n_resamples > 0:
        draws = bootstrap_cells(cells, n_resamples=n_resamples, seed=seed).astype(np.float64)
    none = f"no item has both {reference} and a parsed verdict"

    def samples(fn):
        if draws is None:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(draws)

    per_class = {}
    for label, agree, other in ((CLASSES[0], 0, 1), (CLASSES[1], 3, 2)):  # row of the class
        k, m = int(cells[agree]), int(cells[agree] + cells[other])
        per_class[label] = _with_ci(
            _share(k, m, f"no compared item has {reference} {label}"),
            samples(lambda d, a=agree, o=other: d[:, a] / (d[:, a] + d[:, o])),
            confidence,
            seed,
            n_items=m,
            n_agree=k,
        )
    ac1 = _ac1(cells) if n else Undefined(none)
    ac1_value = ac1 if isinstance(ac1, Undefined) else ac1.value
    ac1_extra = {} if isinstance(ac1, Undefined) else {"pa": ac1.pa, "pe": ac1.pe}
    return {
        "n_compared": n,
        "n_agree": int(cells[0] + cells[3]),
        "agreement": _with_ci(
            _share(int(cells[0] + cells[3]), n, none),
            samples(lambda d: (d[:, 0] + d[:, 3]) / d.sum(axis=1)),
            confidence,
            seed,
        ),
        "per_class": per_class,
        "kappa": _with_ci(
            cohen_kappa_from_confusion(cells.reshape(2, 2)) if n else Undefined(none),
            samples(_kappas),
            confidence,
            seed,
        ),
        "gwet_ac1": _with_ci(
            ac1_value,
            samples(lambda d: ac1_weighted(_patterns(), d, 2)[0]),
            confidence,
            seed,
            **ac1_extra,
        ),
    }


def constant_baselines(
    confusion: Sequence[Sequence[int]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """What a judge that always answers one class would score on the same items: its
    agreement is the share of that class in the reference, κ is 0 (or undefined) by
    construction, AC1 shows how it judges a constant answer."""
    table = np.asarray(confusion, dtype=np.int64).reshape(2, 2)
    rows = table.sum(axis=1)
    out = []
    for j, label in enumerate(CLASSES):
        constant = np.zeros((2, 2), dtype=np.int64)
        constant[:, j] = rows
        out.append(
            {
                "predictor": f"always {label}",
                **binary_agreement(
                    constant, n_resamples=n_resamples, confidence=confidence, seed=seed
                ),
            }
        )
    return out
