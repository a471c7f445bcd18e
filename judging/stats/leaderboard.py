"""95% bootstrap CIs for the judge leaderboard's rows (pure: no Django). Agreement with the
human majority (overall and per majority class) and Cohen's κ get theirs from the judge's
confusion table (:func:`judging.stats.binary.binary_agreement`: items resampled, one
multinomial draw over its cells); the failure rate over the judge's parsed judgments from
:func:`judging.stats.bootstrap.bootstrap_proportion_ci`. Each interval is added as ``"ci"``
to the row's statistic; a statistic without a value gets none."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from judging.stats.binary import CLASSES, binary_agreement
from judging.stats.bootstrap import bootstrap_proportion_ci


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
    """Add the CIs to ``rows`` (from :func:`judging.comparison.leaderboard_rows`) in place,
    matched by judge name to ``totals`` (:class:`judging.comparison.JudgeTotals`)."""
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
