"""Judge↔human and judge↔judge comparison math (seed 000 §4, Figures 3 and 5). Pure Python
and numpy: no Django, no ORM.

- :func:`human_majority` — the human majority label of each item (ties kept as ``None``).
- :func:`judge_vs_majority` — a judge's agreement with the human majority overall and per
  class (``has_failure`` / ``no_failure``, the class being the *human majority's*), Cohen's κ
  and the confusion table; tied items are excluded and counted.
- :func:`judge_vs_judge` — agreement and κ of two judges on the items both judged.
- :func:`kendall_tau_b` / :func:`ranking_comparison` — Kendall's τ-b (ties corrected) between
  the generator rankings two judges produce (by How2Score).
- :func:`leaderboard_rows` — one row per judge: agreement with humans, cost, time,
  parse-failure rate, failure rate, verbosity (gen/ref token ratio).

A verdict is ``True`` (has_failure), ``False`` (no_failure) or ``None`` (the judge's output
could not be parsed); an item absent from a verdict mapping was not judged. Statistics that
cannot be computed are :class:`annotation.agreement.Undefined` with the reason, never ``nan``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.agreement import (
    LabelMatrix,
    Stat,
    Undefined,
    cohen_kappa_from_confusion,
    majority_labels,
    stat_json,
)
from core.lazy import lazy_module

np = lazy_module("numpy")

HAS_FAILURE = "has_failure"
NO_FAILURE = "no_failure"
CLASSES = (HAS_FAILURE, NO_FAILURE)  # confusion rows/columns in this order

NO_COMPARED = "no item has both a clear human majority and a parsed judge verdict"
NO_SHARED = "the two judges have no parsed verdict on a common item"


def _index(has_failure: bool) -> int:
    return 0 if has_failure else 1


def _share(n_agree: int, n: int, reason: str) -> Stat:
    return n_agree / n if n else Undefined(reason)


def _stat(value: Stat) -> dict:
    return stat_json(value)


# --- human majority --------------------------------------------------------------------------


def human_majority(
    triples: Iterable[tuple[Hashable, Hashable, bool]],
) -> dict[Hashable, bool | None]:
    """``{item: True | False | None}`` from ``(item, annotator, has_failure)`` triples:
    the majority binary label of each labelled item, ``None`` where the top count is tied."""
    matrix = LabelMatrix.from_triples(triples, categories=(False, True))
    majority = majority_labels(matrix)
    out: dict[Hashable, bool | None] = {}
    for i, item in enumerate(matrix.items):
        if majority.n_labels[i] == 0:
            continue
        out[item] = None if majority.tie[i] else bool(matrix.categories[int(majority.codes[i])])
    return out


# --- judge vs human majority -----------------------------------------------------------------


@dataclass(frozen=True)
class ClassAgreement:
    """Agreement on the items whose human majority is ``label``."""

    label: str
    n_items: int
    n_agree: int
    agreement: Stat

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "n_items": self.n_items,
            "n_agree": self.n_agree,
            "agreement": _stat(self.agreement),
        }


@dataclass(frozen=True)
class HumanAgreement:
    """A judge against the human majority label.

    ``n_items`` items have human labels; ``n_tied`` of them have a tied majority and are
    excluded; ``n_not_judged`` have no judgment and ``n_parse_failed`` an unparsed one (both
    excluded). ``confusion`` rows: human majority, columns: judge, in :data:`CLASSES` order.
    """

    n_items: int
    n_tied: int
    n_not_judged: int
    n_parse_failed: int
    n_compared: int
    n_agree: int
    agreement: Stat
    kappa: Stat
    per_class: dict[str, ClassAgreement]
    confusion: list[list[int]]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "n_tied": self.n_tied,
            "n_not_judged": self.n_not_judged,
            "n_parse_failed": self.n_parse_failed,
            "n_compared": self.n_compared,
            "n_agree": self.n_agree,
            "agreement": _stat(self.agreement),
            "kappa": _stat(self.kappa),
            "per_class": {k: v.to_json() for k, v in self.per_class.items()},
            "confusion": {
                "rows": "human_majority",
                "columns": "judge",
                "labels": list(CLASSES),
                "counts": self.confusion,
            },
        }


def judge_vs_majority(
    *,
    majority: Mapping[Hashable, bool | None],
    verdicts: Mapping[Hashable, bool | None],
) -> HumanAgreement:
    """Agreement of ``verdicts`` with the human ``majority`` (see :class:`HumanAgreement`)."""
    table = np.zeros((2, 2), dtype=np.int64)
    n_tied = n_not_judged = n_parse_failed = 0
    for item, human in majority.items():
        if human is None:
            n_tied += 1
            continue
        if item not in verdicts:
            n_not_judged += 1
            continue
        verdict = verdicts[item]
        if verdict is None:
            n_parse_failed += 1
            continue
        table[_index(human), _index(bool(verdict))] += 1
    n = int(table.sum())
    n_agree = int(np.trace(table))
    per_class = {}
    for label in CLASSES:
        i = CLASSES.index(label)
        n_class = int(table[i].sum())
        per_class[label] = ClassAgreement(
            label=label,
            n_items=n_class,
            n_agree=int(table[i, i]),
            agreement=_share(
                int(table[i, i]), n_class, f"no compared item has a human majority of {label}"
            ),
        )
    return HumanAgreement(
        n_items=len(majority),
        n_tied=n_tied,
        n_not_judged=n_not_judged,
        n_parse_failed=n_parse_failed,
        n_compared=n,
        n_agree=n_agree,
        agreement=_share(n_agree, n, NO_COMPARED),
        kappa=cohen_kappa_from_confusion(table) if n else Undefined(NO_COMPARED),
        per_class=per_class,
        confusion=table.tolist(),
    )


# --- judge vs judge --------------------------------------------------------------------------


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
            "agreement": _stat(self.agreement),
            "kappa": _stat(self.kappa),
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
        table[_index(bool(va)), _index(bool(vb))] += 1
    n = int(table.sum())
    n_agree = int(np.trace(table))
    return JudgePairAgreement(
        n_shared=n,
        n_agree=n_agree,
        n_only_a=len(a.keys() - common),
        n_only_b=len(b.keys() - common),
        n_parse_failed=n_parse_failed,
        agreement=_share(n_agree, n, NO_SHARED),
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
        out = {"n_common": self.n_common, "tau": _stat(self.tau), "generators": self.generators}
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


# --- leaderboard -----------------------------------------------------------------------------


@dataclass
class JudgeTotals:
    """What the leaderboard needs of one judge (filled by the selectors)."""

    judge: str
    n_judgments: int = 0
    n_parse_failed: int = 0
    n_has_failure: int = 0
    cost: float = 0.0
    time_s: float = 0.0
    gen_tokens: int = 0
    ref_tokens: int = 0
    gen_tokens_no_failure: int = 0
    ref_tokens_no_failure: int = 0
    gen_tokens_has_failure: int = 0
    ref_tokens_has_failure: int = 0
    human: HumanAgreement | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _ratio(num: float, den: float, reason: str) -> Stat:
    return num / den if den else Undefined(reason)


def leaderboard_rows(totals: Iterable[JudgeTotals]) -> list[dict[str, Any]]:
    """One row per judge, best agreement with the human majority first (undefined last, then
    by name). Rates are over the judge's judgments; ``failure_rate`` excludes parse failures
    (as How2Score does); ``verbosity`` is the gen/ref token ratio (ratio of means) of the
    judged candidates, also split by the judge's verdict — a higher ratio among
    ``no_failure`` verdicts than among ``has_failure`` ones hints at verbosity bias."""
    rows = []
    for t in totals:
        n_parsed = t.n_judgments - t.n_parse_failed
        human = t.human
        rows.append(
            {
                "judge": t.judge,
                **t.extra,
                "agreement": _stat(human.agreement)
                if human
                else _stat(Undefined("no study chosen")),
                "agreement_has_failure": _stat(human.per_class[HAS_FAILURE].agreement)
                if human
                else None,
                "agreement_no_failure": _stat(human.per_class[NO_FAILURE].agreement)
                if human
                else None,
                "kappa": _stat(human.kappa) if human else None,
                "n_compared": human.n_compared if human else 0,
                "n_judgments": t.n_judgments,
                "n_parse_failed": t.n_parse_failed,
                "parse_failure_rate": _stat(
                    _ratio(t.n_parse_failed, t.n_judgments, "no judgments")
                ),
                "failure_rate": _stat(_ratio(t.n_has_failure, n_parsed, "no parsed judgments")),
                "cost": round(t.cost, 6),
                "cost_per_1k": _stat(_ratio(1000 * t.cost, t.n_judgments, "no judgments")),
                "time_s": round(t.time_s, 3),
                "verbosity": _stat(_ratio(t.gen_tokens, t.ref_tokens, "no token counts")),
                "verbosity_no_failure": _stat(
                    _ratio(
                        t.gen_tokens_no_failure,
                        t.ref_tokens_no_failure,
                        "no no_failure verdicts with token counts",
                    )
                ),
                "verbosity_has_failure": _stat(
                    _ratio(
                        t.gen_tokens_has_failure,
                        t.ref_tokens_has_failure,
                        "no has_failure verdicts with token counts",
                    )
                ),
            }
        )

    def key(row):
        value = row["agreement"]["value"]
        return (value is None, -(value or 0.0), row["judge"])

    return sorted(rows, key=key)
