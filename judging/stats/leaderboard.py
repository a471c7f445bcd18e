"""The judge leaderboard's rows and their 95% bootstrap CIs (pure: no Django).

:func:`leaderboard_rows` makes one row per judge from its :class:`JudgeTotals` (filled by
:mod:`judging.leaderboard.reads`). :func:`add_leaderboard_intervals` adds the CIs. Agreement with the
human majority (overall and per majority class) and Cohen's κ get theirs from the judge's
confusion table (:func:`judging.stats.binary.binary_agreement`: items resampled, one
multinomial draw over its cells); the failure rate over the judge's parsed judgments from
:func:`judging.stats.bootstrap.bootstrap_proportion_ci`. Each interval is added as ``"ci"``
to the row's statistic; a statistic without a value gets none."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from annotation.agreement import Stat, Undefined, stat_json
from judging.agreement import HAS_FAILURE, NO_FAILURE, HumanAgreement
from judging.stats.binary import CLASSES, binary_agreement
from judging.stats.bootstrap import bootstrap_proportion_ci


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
                "agreement": stat_json(human.agreement)
                if human
                else stat_json(Undefined("no study chosen")),
                "agreement_has_failure": stat_json(human.per_class[HAS_FAILURE].agreement)
                if human
                else None,
                "agreement_no_failure": stat_json(human.per_class[NO_FAILURE].agreement)
                if human
                else None,
                "kappa": stat_json(human.kappa) if human else None,
                "n_compared": human.n_compared if human else 0,
                "n_judgments": t.n_judgments,
                "n_parse_failed": t.n_parse_failed,
                "parse_failure_rate": stat_json(
                    _ratio(t.n_parse_failed, t.n_judgments, "no judgments")
                ),
                "failure_rate": stat_json(_ratio(t.n_has_failure, n_parsed, "no parsed judgments")),
                "cost": round(t.cost, 6),
                "cost_per_1k": stat_json(_ratio(1000 * t.cost, t.n_judgments, "no judgments")),
                "time_s": round(t.time_s, 3),
                "verbosity": stat_json(_ratio(t.gen_tokens, t.ref_tokens, "no token counts")),
                "verbosity_no_failure": stat_json(
                    _ratio(
                        t.gen_tokens_no_failure,
                        t.ref_tokens_no_failure,
                        "no no_failure verdicts with token counts",
                    )
                ),
                "verbosity_has_failure": stat_json(
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


def _add(stat: dict[str, Any] | None, interval: dict[str, Any] | None) -> None:
    if stat and stat.get("value") is not None and interval:
        stat["ci"] = interval


def add_leaderboard_intervals(
    rows: list[dict[str, Any]],
    totals: Iterable[Any],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Add the CIs to ``rows`` (from :func:`leaderboard_rows`) in place,
    matched by judge name to ``totals`` (:class:`JudgeTotals`)."""
    if n_resamples <= 0:
        return rows
    options = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    by_judge = {t.judge: t for t in totals}
    for row in rows:
        t = by_judge.get(row["judge"])
        if t is None:
            continue
        n_parsed = t.n_judgments - t.n_parse_failed
        if n_parsed > 0:
            _add(
                row["failure_rate"],
                bootstrap_proportion_ci(t.n_has_failure, n_parsed, **options).to_json(),
            )
        if t.human is None or not t.human.n_compared:
            continue
        stats = binary_agreement(t.human.confusion, reference="a clear human majority", **options)
        _add(row["agreement"], stats["agreement"].get("ci"))
        _add(row["kappa"], stats["kappa"].get("ci"))
        _add(row["agreement_has_failure"], stats["per_class"][CLASSES[0]].get("ci"))
        _add(row["agreement_no_failure"], stats["per_class"][CLASSES[1]].get("ci"))
    return rows
