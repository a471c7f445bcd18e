"""Statistics for judges and benchmark scores: pure functions (numpy, scipy, statsmodels), no
Django. The agreement coefficients themselves (Cohen's κ, Fleiss' κ, Krippendorff's α,
Gwet's AC1, majority, leave-one-out) live in :mod:`annotation.agreement`; this package adds
what judging needs around them, and what the validation features (:mod:`validation`) build on.

- :mod:`~judging.stats.bootstrap` — percentile bootstrap intervals over items with a fixed
  seed: means / proportions, statistics of a contingency table, paired differences.
- :mod:`~judging.stats.significance` — McNemar's exact test, Holm's adjustment, Spearman's ρ.
- :mod:`~judging.stats.binary` — a judge against a binary reference (the human majority or
  another judge): agreement overall and per class, κ and AC1, each with a bootstrap CI, and
  the constant-predictor baselines.
- :mod:`~judging.stats.how2score` — How2Score's CIs and the paired tests between generators.
- :mod:`~judging.stats.leaderboard` — the judge leaderboard's rows and their CIs.
"""

from judging.stats.bootstrap import (
    Interval,
    PairedDifference,
    bootstrap_cells,
    bootstrap_mean_ci,
    bootstrap_proportion_ci,
    paired_bootstrap,
    percentile_interval,
)
from judging.stats.significance import McNemar, Spearman, holm_adjust, mcnemar, spearman

__all__ = [
    "Interval",
    "McNemar",
    "PairedDifference",
    "Spearman",
    "bootstrap_cells",
    "bootstrap_mean_ci",
    "bootstrap_proportion_ci",
    "holm_adjust",
    "mcnemar",
    "paired_bootstrap",
    "percentile_interval",
    "spearman",
]
