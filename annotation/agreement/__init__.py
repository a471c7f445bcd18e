"""Agreement statistics over label matrices: pure numpy, no Django, no ORM.

The input everywhere is a :class:`LabelMatrix` (:mod:`annotation.agreement.matrix`): items
(rows) × annotators (columns) of integer category codes, ``-1`` where an annotator did not
label an item. Labels are nominal categories of any kind (``"has_failure"``, ``"3"``,
``True``); the matrix keeps the mapping.

Every statistic returns a ``float`` or an :class:`Undefined` carrying the reason (a single
annotator, every label identical, no item labelled twice, no labels at all) — never ``nan``
and never an exception for such data.

Statistics (each function's docstring says what it measures and how to read it):

- :func:`krippendorff_alpha` and :func:`alpha_bootstrap_ci` — chance-corrected reliability
  (through the ``krippendorff`` package), with a unit-resampling bootstrap interval
  (:mod:`~annotation.agreement.alpha`).
- :func:`percent_agreement` — raw share of agreeing annotator pairs.
- :func:`cohen_kappa` / :func:`pairwise_cohen_kappa` — chance-corrected agreement of two annotators.
- :func:`weighted_kappa_from_confusion` / :func:`mean_pairwise_weighted_kappa` — weighted κ for
  ordered categories (rating scales).
- :func:`fleiss_kappa` — chance-corrected agreement of many annotators
  (these three in :mod:`~annotation.agreement.kappa`).
- :func:`gwet_ac1` and :func:`ac1_bootstrap_ci` — Gwet's AC1, chance-corrected agreement that
  stays robust when one category dominates (:mod:`~annotation.agreement.ac1`).
- :func:`majority_labels` — the majority label per item, with ties reported.
- :func:`leave_one_out` — each annotator against the majority of the others
  (both in :mod:`~annotation.agreement.majority`).
"""

from annotation.agreement.ac1 import (
    AC1Parts,
    ac1_bootstrap_ci,
    ac1_weighted,
    gwet_ac1,
    gwet_ac1_from_counts,
)
from annotation.agreement.alpha import (
    LEVELS,
    BootstrapCI,
    Level,
    alpha_bootstrap_ci,
    krippendorff_alpha,
)
from annotation.agreement.kappa import (
    PairAgreement,
    cohen_kappa,
    cohen_kappa_from_confusion,
    confusion_matrix,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    mean_pairwise_weighted_kappa,
    pairwise_cohen_kappa,
    percent_agreement,
    weighted_kappa_from_confusion,
)
from annotation.agreement.majority import LeaveOneOut, Majority, leave_one_out, majority_labels
from annotation.agreement.matrix import (
    MISSING,
    NO_ITEM_TWICE,
    NO_LABELS,
    ONE_ANNOTATOR,
    ONE_CATEGORY,
    ONE_ITEM_IN_COMMON,
    LabelMatrix,
    Stat,
    Undefined,
    label_distribution,
    stat_json,
)

__all__ = [
    "LEVELS",
    "MISSING",
    "NO_ITEM_TWICE",
    "NO_LABELS",
    "ONE_ANNOTATOR",
    "ONE_CATEGORY",
    "ONE_ITEM_IN_COMMON",
    "AC1Parts",
    "BootstrapCI",
    "LabelMatrix",
    "LeaveOneOut",
    "Level",
    "Majority",
    "PairAgreement",
    "Stat",
    "Undefined",
    "ac1_bootstrap_ci",
    "ac1_weighted",
    "alpha_bootstrap_ci",
    "cohen_kappa",
    "cohen_kappa_from_confusion",
    "confusion_matrix",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "gwet_ac1",
    "gwet_ac1_from_counts",
    "krippendorff_alpha",
    "label_distribution",
    "leave_one_out",
    "majority_labels",
    "mean_pairwise_weighted_kappa",
    "pairwise_cohen_kappa",
    "percent_agreement",
    "stat_json",
    "weighted_kappa_from_confusion",
]
