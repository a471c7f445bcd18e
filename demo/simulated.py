"""Simulated annotators for the demo (pure: no Django).

:func:`draw_labels` draws binary labels ("has a critical failure") for ``n_annotators``
simulated people: each one agrees with the item's reference verdict (the paper's published
verdict) with probability ``p_agree``, independently, from a seeded generator. Among the seeds
``0 … n_seeds-1`` it keeps the first whose Krippendorff's α is closest to ``target`` (the
paper's 0.593), so the demo's agreement report shows a realistic figure, the same on every
load. These labels are simulated, and every page that shows them says so (their annotator ids
start with ``simulated-``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.agreement import LabelMatrix, krippendorff_alpha

PAPER_ALPHA = 0.593
SIMULATED_PREFIX = "simulated-"


@dataclass(frozen=True)
class SimulatedLabels:
    seed: int
    alpha: float
    labels: list[list[bool]]  # items × annotators
    steps: list[list[tuple[int, int]]]  # items × annotators: (L1 step, L2 step) a failure cites


def _alpha(labels: list[list[bool]]) -> float | None:
    triples = [(i, a, value) for i, row in enumerate(labels) for a, value in enumerate(row)]
    value = krippendorff_alpha(LabelMatrix.from_triples(triples))
    return value if isinstance(value, float) else None


def _draw(
    rng: random.Random, truth: Sequence[bool], shape: Sequence[tuple[int, int]], n: int, p: float
):
    labels, steps = [], []
    for verdict, (n_l1, n_l2) in zip(truth, shape, strict=True):
        row = [verdict if rng.random() < p else not verdict for _ in range(n)]
        labels.append(row)
        steps.append([(rng.randint(1, max(1, n_l1)), rng.randint(1, max(1, n_l2))) for _ in row])
    return labels, steps


def draw_labels(
    truth: Sequence[bool],
    shape: Sequence[tuple[int, int]],
    *,
    n_annotators: int = 3,
    p_agree: float = 0.85,
    target: float = PAPER_ALPHA,
    n_seeds: int = 200,
) -> SimulatedLabels:
    """Seeded labels whose α is the closest to ``target`` over ``n_seeds`` seeds.
    ``shape[i]`` is item i's (number of L1 steps, number of L2 steps)."""
    best: SimulatedLabels | None = None
    for seed in range(n_seeds):
        labels, steps = _draw(random.Random(seed), truth, shape, n_annotators, p_agree)
        alpha = _alpha(labels)
        if alpha is None:
            continue
        if best is None or abs(alpha - target) < abs(best.alpha - target):
            best = SimulatedLabels(seed=seed, alpha=alpha, labels=labels, steps=steps)
    if best is None:
        raise ValueError("no seed gives a defined α (every label the same category)")
    return best
