"""Judge↔judge comparison math (seed 000 §4, Figure 5). Pure Python and numpy: no Django.

- :func:`judge_vs_judge` — agreement and κ of two judges on the items both judged.
- :func:`kendall_tau_b` / :func:`paired_ranking_comparison` / :func:`ranking_comparison` —
  Kendall's τ-b (ties corrected) between the generator rankings two judges produce (by
  How2Score); :func:`ranking` — generators best first with competition ranks.

Verdicts are as in :mod:`judging.agreement` (``None``: unparsed; absent: not judged).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.agreement import Stat, Undefined, cohen_kappa_from_confusion, stat_json
from core.lazy import lazy_module
from judging.agreement import CLASSES, class_index, share

np = lazy_module("numpy")

NO_SHARED = "the two judges have no parsed verdict on a common item"


@dataclass(frozen=True)
class JudgePairAgreement:
    """Two judges on the items both judged with a parsed verdict. ``confusion`` rows: judge A,
    columns: judge B, in :data:`CLASSES` order."""

    n_shared: int
    n_agree: int
    n_only_a: int
    n_only_b: int
    n_parse_failed: int
    agreement: Stat
    kappa: Stat
    confusion: list[list[int]]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_shared": self.n_shared,
            "n_agree": self.n_agree,
            "n_only_a": self.n_only_a,
            "n_only_b": self.n_only_b,
            "n_parse_failed": self.n_parse_failed,
            "agreement": stat_json(self.agreement),
            "kappa": stat_json(self.kappa),
            "confusion": {
                "rows": "judge_a",
                "columns": "judge_b",
                "labels": list(CLASSES),
                "counts": self.confusion,
            },
        }


def judge_vs_judge(
    *, a: Mapping[Hashable, bool | None], b: Mapping[Hashable, bool | None]
) -> JudgePairAgreement:
    """Binary agreement and Cohen's κ of two judges' verdicts on their common items; items
    where either verdict is unparsed are excluded and counted in ``n_parse_failed``."""
    table = np.zeros((2, 2), dtype=np.int64)
    n_parse_failed = 0
    common = a.keys() & b.keys()
    for item in common:
        va, vb = a[item], b[item]
        if va is None or vb is None:
            n_parse_failed += 1
            continue
        table[class_index(bool(va)), class_index(bool(vb))] += 1
    n = int(table.sum())
    n_agree = int(np.trace(table))
    return JudgePairAgreement(
        n_shared=n,
        n_agree=n_agree,
        n_only_a=len(a.keys() - common),
        n_only_b=len(b.keys() - common),
        n_parse_failed=n_parse_failed,
        agreement=share(n_agree, n, NO_SHARED),
        kappa=cohen_kappa_from_confusion(table) if n else Undefined(NO_SHARED),
        confusion=table.tolist(),
    )


# --- rankings and Kendall's tau --------------------------------------------------------------


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> Stat:
    """Kendall's τ-b of two paired sequences, corrected for ties (as ``scipy.stats.kendalltau``):
    (concordant − discordant) / √((n0 − ties in x)(n0 − ties in y)), n0 = n(n−1)/2 pairs.
    Undefined for fewer than two pairs or when every value of one side is tied."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    n = len(x)
    if n < 2:
        return Undefined("fewer than two generators in common")
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    dx = np.sign(xs[:, None] - xs[None, :])
    dy = np.sign(ys[:, None] - ys[None, :])
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    prod = (dx * dy)[upper]
    concordant = int((prod > 0).sum())
    discordant = int((prod < 0).sum())
    n0 = n * (n - 1) // 2
    ties_x = int((dx[upper] == 0).sum())
    ties_y = int((dy[upper] == 0).sum())
    denominator = math.sqrt((n0 - ties_x) * (n0 - ties_y))
    if denominator == 0:
        return Undefined("every generator has the same score under one of the judges")
    return (concordant - discordant) / denominator


def ranking(scores: Mapping[str, float]) -> list[dict[str, Any]]:
    """Generators best first with competition ranks (equal scores share a rank: 1, 2, 2, 4)."""
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[dict[str, Any]] = []
    for i, (name, score) in enumerate(ordered):
        rank = out[-1]["rank"] if out and out[-1]["score"] == score else i + 1
        out.append({"generator": name, "score": score, "rank": rank})
    return out


@dataclass(frozen=True)
class RankingComparison:
    n_common: int
    tau: Stat
    generators: list[str] = field(default_factory=list)
    n_items: int | None = None  # generations both judges scored (paired comparisons)
    scores_a: dict[str, float] = field(default_factory=dict)
    scores_b: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {"n_common": self.n_common, "tau": stat_json(self.tau), "generators": self.generators}
        if self.n_items is not None:
            out.update(n_items=self.n_items, scores_a=self.scores_a, scores_b=self.scores_b)
        return out


def paired_ranking_comparison(
    *,
    a: Mapping[Hashable, bool | None],
    b: Mapping[Hashable, bool | None],
    generator_of: Mapping[Hashable, str],
) -> RankingComparison:
    """Kendall's τ-b between two judges' How2Scores of the generators, each How2Score counted
    on the generations *both* judges scored (a parse failure under either judge leaves the
    generation out); ``n_items``: those generations, ``n_common``: the generators with one."""
    tallies: dict[str, list[int]] = {}
    for item in a.keys() & b.keys():
        va, vb = a[item], b[item]
        if va is None or vb is None or item not in generator_of:
            continue
        t = tallies.setdefault(generator_of[item], [0, 0, 0])
        t[0] += 1
        t[1] += bool(va)
        t[2] += bool(vb)
    scores_a = {g: 1.0 - t[1] / t[0] for g, t in tallies.items()}
    scores_b = {g: 1.0 - t[2] / t[0] for g, t in tallies.items()}
    common = sorted(tallies)
    return RankingComparison(
        n_common=len(common),
        tau=kendall_tau_b([scores_a[g] for g in common], [scores_b[g] for g in common]),
        generators=common,
        n_items=sum(t[0] for t in tallies.values()),
        scores_a=scores_a,
        scores_b=scores_b,
    )


def ranking_comparison(a: Mapping[str, float], b: Mapping[str, float]) -> RankingComparison:
    """Kendall's τ-b between two judges' scores of the generators both scored."""
    common = sorted(a.keys() & b.keys())
    tau = kendall_tau_b([a[g] for g in common], [b[g] for g in common])
    return RankingComparison(n_common=len(common), tau=tau, generators=common)
