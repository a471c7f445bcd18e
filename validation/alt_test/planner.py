"""The alt-test sample-size planner: the reference implementation's simulation (nitaytech/AltTest,
``alt_test_example.ipynb``; the paper's Appendix C), seeded. Pure: no Django.

For each of ``n_datasets`` simulated datasets: class priors drawn from a flat Dirichlet over K
categories; ``pool_items`` items with a gold label drawn from the priors; ``pool_annotators``
annotators and one judge, each answering the gold label with probability 1 − noise and a label
drawn from the priors otherwise (the reference's ``noise · priors + (1 − noise) · gold``). For
each number of items n, ``n_boots`` times: n items and ``n_annotators`` annotators drawn
without replacement, and the alt-test (accuracy) run at every ε. Reported per n: the expected
winning rate ω per ε, the advantage probability ρ (mean, 5th and 95th percentiles), the
annotators' mean pairwise Cohen's κ and the judge's accuracy against the annotators' majority —
so a researcher can size a human study before paying for it.

The alt-test here is :func:`validation.alt_test.stats.alt_test`'s, computed on arrays (every
simulated annotator labels every item, so accuracy compares counts); its p-values and
Benjamini–Yekutieli decisions come from the same functions.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from core.lazy import lazy_module
from validation.alt_test.stats import DEFAULT_Q, benjamini_yekutieli, one_sided_p_values

np = lazy_module("numpy")

DEFAULT_SIZES = tuple(range(30, 201, 10))
DEFAULT_EPSILONS = (0.0, 0.05, 0.1, 0.2)
LIMITS = {
    "n_categories": (2, 20),
    "n_annotators": (2, 10),
    "n_datasets": (1, 50),
    "n_boots": (1, 50),
    "pool_items": (30, 2000),
    "pool_annotators": (2, 20),
}
MAX_SIZES, MAX_EPSILONS = 40, 8
MAX_WORK = 20 * 10 * 18 * 200 * 4  # datasets × boots × sizes × items × ε of the reference's default


def _labels(rng, priors, gold, noise: float, n_raters: int) -> np.ndarray:
    """``n_raters × len(gold)`` labels: the gold label with probability 1 − noise, else one
    drawn from the priors (the reference's mixture)."""
    shape = (n_raters, gold.size)
    noisy = rng.random(shape) < noise
    drawn = rng.choice(priors.size, size=shape, p=priors)
    return np.where(noisy, drawn, gold[None, :])


def _kappa(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """Cohen's κ of two raters along the last axis (NaN where expected agreement is 1)."""
    observed = (a == b).mean(axis=-1)
    pa = np.stack([(a == c).mean(axis=-1) for c in range(k)], axis=-1)
    pb = np.stack([(b == c).mean(axis=-1) for c in range(k)], axis=-1)
    expected = (pa * pb).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)


def array_alt_test(
    labels: np.ndarray, judge: np.ndarray, *, epsilons: Sequence[float], q: float
) -> tuple[dict[float, list[float]], list[float]]:
    """The accuracy alt-test of each of B complete designs at once: ``labels`` is B ×
    annotators × items, ``judge`` B × items. Returns ({ε: [ω per design]}, [ρ per design])."""
    same = labels[:, :, None, :] == labels[:, None, :, :]  # B × left out × other × items
    human_count = same.sum(axis=2) - 1  # the others agreeing with the left-out annotator
    judge_same = judge[:, None, :] == labels  # B × annotator × items
    judge_count = judge_same.sum(axis=1)[:, None, :] - judge_same  # the others agreeing
    judge_win = judge_count >= human_count  # accuracy = count / (annotators − 1): same order
    differences = (human_count >= judge_count).astype(float) - judge_win
    n_annotators = labels.shape[1]
    eps = np.asarray(epsilons, dtype=float)[:, None, None, None]
    p_values = np.nan_to_num(one_sided_p_values(differences[None], eps), nan=1.0)  # ε × B × A
    # BY decisions: a row whose smallest p is above q rejects nothing, one whose largest p is
    # at most q / H_m rejects everything (BY's first and last thresholds); the rest go through
    # benjamini_yekutieli (statsmodels)
    harmonic = float(np.sum(1.0 / np.arange(1, n_annotators + 1)))
    n_rejected = np.where(p_values.max(axis=-1) <= q / harmonic, n_annotators, 0)
    unsure = (p_values.min(axis=-1) <= q) & (n_rejected == 0)
    for e, b in zip(*np.nonzero(unsure), strict=True):
        n_rejected[e, b] = sum(benjamini_yekutieli([float(x) for x in p_values[e, b]], q))
    omegas = {e: list(n_rejected[k] / n_annotators) for k, e in enumerate(epsilons)}
    return omegas, [float(x) for x in judge_win.mean(axis=2).mean(axis=1)]


def _nanmean(values) -> float | None:
    """The mean of the defined values; None when none is (every κ undefined)."""
    finite = [float(v) for v in values if not np.isnan(v)]
    return float(np.mean(finite)) if finite else None


def _check(name: str, value: int) -> None:
    low, high = LIMITS[name]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name}: expected a whole number from {low} to {high}, got {value!r}")


def check_parameters(
    *,
    n_categories: int,
    annotator_noise: float,
    judge_noise: float,
    sizes: Sequence[int],
    epsilons: Sequence[float],
    n_annotators: int,
    n_datasets: int,
    n_boots: int,
    pool_items: int,
    pool_annotators: int,
    q: float,
) -> None:
    """ValueError naming the parameter for anything out of range (also a total-work cap)."""
    for name, value in (
        ("n_categories", n_categories),
        ("n_annotators", n_annotators),
        ("n_datasets", n_datasets),
        ("n_boots", n_boots),
        ("pool_items", pool_items),
        ("pool_annotators", pool_annotators),
    ):
        _check(name, value)
    for name, value in (("annotator_noise", annotator_noise), ("judge_noise", judge_noise)):
        if not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValueError(f"{name}: expected a number from 0 to 1, got {value!r}")
    if not 0 < q < 1:
        raise ValueError(f"q: expected a number between 0 and 1, got {q!r}")
    if not sizes or len(sizes) > MAX_SIZES:
        raise ValueError(f"sizes: give 1 to {MAX_SIZES} numbers of items")
    if any(not isinstance(s, int) or not 2 <= s <= pool_items for s in sizes):
        raise ValueError(f"sizes: each must be a whole number from 2 to pool_items ({pool_items})")
    if not epsilons or len(epsilons) > MAX_EPSILONS:
        raise ValueError(f"epsilons: give 1 to {MAX_EPSILONS} values")
    if any(not -1 <= e <= 1 for e in epsilons):
        raise ValueError("epsilons: each must be from -1 to 1")
    if n_annotators > pool_annotators:
        raise ValueError("n_annotators: cannot exceed pool_annotators")
    work = n_datasets * n_boots * sum(sizes) * len(epsilons)
    if work > MAX_WORK:
        raise ValueError(
            f"sizes: too much simulation (datasets × boots × Σ sizes × ε = {work:,} > "
            f"{MAX_WORK:,}); use fewer datasets, boots or sizes"
        )


def plan(
    *,
    n_categories: int = 4,
    annotator_noise: float = 0.3,
    judge_noise: float = 0.3,
    sizes: Sequence[int] = DEFAULT_SIZES,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    n_annotators: int = 3,
    n_datasets: int = 20,
    n_boots: int = 10,
    pool_items: int = 500,
    pool_annotators: int = 6,
    q: float = DEFAULT_Q,
    seed: int = 0,
) -> dict[str, Any]:
    """The simulation (module docstring). Same arguments, same numbers."""
    sizes, epsilons = [int(s) for s in sizes], [float(e) for e in epsilons]
    params = {
        "n_categories": n_categories,
        "annotator_noise": float(annotator_noise),
        "judge_noise": float(judge_noise),
        "n_annotators": n_annotators,
        "n_datasets": n_datasets,
        "n_boots": n_boots,
        "pool_items": pool_items,
        "pool_annotators": pool_annotators,
        "q": float(q),
        "seed": seed,
    }
    check_parameters(sizes=sizes, epsilons=epsilons, **{k: params[k] for k in LIMITS},
                     annotator_noise=annotator_noise, judge_noise=judge_noise, q=q)  # fmt: skip
    rng = np.random.default_rng(seed)
    omega = {s: {e: [] for e in epsilons} for s in sizes}
    rho: dict[int, list[float]] = {s: [] for s in sizes}
    kappa: dict[int, list[float]] = {s: [] for s in sizes}
    accuracy: dict[int, list[float]] = {s: [] for s in sizes}
    pairs = [(a, b) for a in range(n_annotators) for b in range(a + 1, n_annotators)]
    for _ in range(n_datasets):
        priors = rng.dirichlet(np.ones(n_categories))
        gold = rng.choice(n_categories, size=pool_items, p=priors)
        humans = _labels(rng, priors, gold, annotator_noise, pool_annotators)
        judge = _labels(rng, priors, gold, judge_noise, 1)[0]
        for size in sizes:
            rows = np.stack(
                [rng.choice(pool_items, size=size, replace=False) for _ in range(n_boots)]
            )
            who = np.stack(
                [
                    rng.choice(pool_annotators, size=n_annotators, replace=False)
                    for _ in range(n_boots)
                ]
            )
            labels = humans[who[:, :, None], rows[:, None, :]]  # boots × annotators × items
            llm = judge[rows]  # boots × items
            omegas, rhos = array_alt_test(labels, llm, epsilons=epsilons, q=q)
            rho[size].extend(rhos)
            for eps in epsilons:
                omega[size][eps].extend(omegas[eps])
            with warnings.catch_warnings():  # every pair's κ undefined: NaN, said as such
                warnings.simplefilter("ignore", RuntimeWarning)
                kappas = [_kappa(labels[:, a], labels[:, b], n_categories) for a, b in pairs]
                kappa[size].extend(np.nanmean(kappas, 0))
            counts = np.stack([(labels == c).sum(axis=1) for c in range(n_categories)], axis=-1)
            accuracy[size].extend((counts.argmax(axis=-1) == llm).mean(axis=1))
    out_rows = []
    for s in sizes:
        out_rows.append(
            {
                "n_items": s,
                "winning_rate": {f"{e:g}": float(np.mean(omega[s][e])) for e in epsilons},
                "advantage_probability": float(np.mean(rho[s])),
                "advantage_probability_p05": float(np.percentile(rho[s], 5)),
                "advantage_probability_p95": float(np.percentile(rho[s], 95)),
                "annotator_kappa": _nanmean(kappa[s]),
                "judge_accuracy_vs_majority": float(np.mean(accuracy[s])),
            }
        )
    smallest = {
        f"{e:g}": next((r["n_items"] for r in out_rows if r["winning_rate"][f"{e:g}"] >= 0.5), None)
        for e in epsilons
    }
    return {
        "parameters": {**params, "sizes": sizes, "epsilons": epsilons},
        "rows": out_rows,
        "smallest_n_items_passing": smallest,
        "annotator_kappa": _nanmean(
            [np.nan if r["annotator_kappa"] is None else r["annotator_kappa"] for r in out_rows]
        ),
        "judge_accuracy_vs_majority": float(
            np.mean([r["judge_accuracy_vs_majority"] for r in out_rows])
        ),
    }


# the estimate a verdict quotes: a quick grid (about half a second of CPU)
ESTIMATE_PLAN = {"n_datasets": 6, "n_boots": 6, "sizes": (30, 40, 50, 60, 80, 100, 120, 150, 200)}


def items_needed(*, n_categories: int, n_annotators: int, epsilon: float) -> dict[str, Any]:
    """The planner's estimate of the items per annotator from which a judge as good as the
    annotators (both noise 0.3) passes at ``epsilon``: ``{"n_items": n or None (not within
    200), "n_categories", "n_annotators", "largest"}``. K and the number of annotators are
    clamped to the planner's limits."""
    k = min(max(n_categories, LIMITS["n_categories"][0]), LIMITS["n_categories"][1])
    m = min(max(n_annotators, LIMITS["n_annotators"][0]), LIMITS["n_annotators"][1])
    result = plan(n_categories=k, n_annotators=m, epsilons=(epsilon,), **ESTIMATE_PLAN)
    return {
        "n_items": result["smallest_n_items_passing"][f"{float(epsilon):g}"],
        "n_categories": k,
        "n_annotators": m,
        "largest": ESTIMATE_PLAN["sizes"][-1],
    }
