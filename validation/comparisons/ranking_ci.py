"""A percentile bootstrap CI for Kendall's τ-b between two judges' rankings of the generators
(pure: numpy, no Django).

The point estimate is :func:`validation.comparisons.stats.paired_ranking_comparison`: each generator's
How2Score under each judge counted on the generations both judges scored, then τ-b between the
two score vectors. A resample draws each generator's generations with replacement *within the
generator* (stratified, so every generator stays in the ranking): a generation enters the two
How2Scores only through its pair of verdicts, so one resample of a generator is one multinomial
draw over the four (verdict a, verdict b) cells. τ-b of each resample, then the percentiles
(:func:`judging.stats.bootstrap.percentile_interval`, fixed seed).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from annotation.agreement import Undefined
from core.lazy import lazy_module
from judging.stats.bootstrap import Interval, percentile_interval

np = lazy_module("numpy")

METHOD = (
    "percentile bootstrap of the generations both judges scored, resampled within each "
    "generator (fixed seed)"
)


def tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b (ties corrected, as ``scipy.stats.kendalltau``) of each row pair of the
    resamples × generators arrays ``x`` and ``y``; ``nan`` where one side is all tied."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    n = x.shape[1]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    dx = np.sign(x[:, :, None] - x[:, None, :])[:, upper]
    dy = np.sign(y[:, :, None] - y[:, None, :])[:, upper]
    s = (dx * dy).sum(axis=1)
    n0 = n * (n - 1) / 2
    denominator = np.sqrt((n0 - (dx == 0).sum(axis=1)) * (n0 - (dy == 0).sum(axis=1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, s / denominator, np.nan)


def ranking_tau_ci(
    *,
    a: Mapping[Hashable, bool | None],
    b: Mapping[Hashable, bool | None],
    generator_of: Mapping[Hashable, str],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval | Undefined:
    """The CI of τ-b between the How2Score rankings of ``a`` and ``b`` (``{generation:
    has_failure | None}``; ``None``, a parse failure, leaves the generation out)."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    cells: dict[str, np.ndarray] = {}
    for item in a.keys() & b.keys():
        va, vb = a[item], b[item]
        if va is None or vb is None or item not in generator_of:
            continue
        table = cells.setdefault(generator_of[item], np.zeros(4, dtype=np.int64))
        table[2 * bool(va) + bool(vb)] += 1
    if len(cells) < 2:
        return Undefined("fewer than two generators in common")
    rng = np.random.default_rng(seed)
    score_a = np.empty((n_resamples, len(cells)))
    score_b = np.empty((n_resamples, len(cells)))
    for g, name in enumerate(sorted(cells)):
        table = cells[name]
        n = int(table.sum())
        draws = rng.multinomial(n, table / n, size=n_resamples)
        score_a[:, g] = 1.0 - (draws[:, 2] + draws[:, 3]) / n  # a said has_failure
        score_b[:, g] = 1.0 - (draws[:, 1] + draws[:, 3]) / n
    return percentile_interval(
        tau_b_rows(score_a, score_b), confidence=confidence, seed=seed, method=METHOD
    )
