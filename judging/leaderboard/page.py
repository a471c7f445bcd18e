"""What the judge leaderboard page shows: the stored report's rows with their statistics and
CIs formatted once (:mod:`core.formatting`) and a bar chart of agreement with the human
majority (:mod:`core.charts`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from annotation.models import Study
from core.charts import bar_chart_svg
from core.formatting import DASH, fmt_interval
from core.formatting import fmt_stat as _fmt_stat
from judging.leaderboard.reads import judge_leaderboard
from judging.selectors.verdicts import judges_named

PICK_LIMIT = 100  # studies offered in the picker
# An undefined statistic shows as "—" in these tables.
fmt_stat = partial(_fmt_stat, undefined=DASH)


def _percent_ci(stat: dict | None) -> str:
    """A share's interval in percent (``95% CI 70.0 – 90.0%``), "" without one."""
    ci = (stat or {}).get("ci") or {}
    if ci.get("low") is None:
        return ""
    return f"{ci['confidence']:.0%} CI {100 * ci['low']:.1f} – {100 * ci['high']:.1f}%"


def _leaderboard_row(r: dict) -> dict:
    return {
        **r,
        "agreement_ci": _percent_ci(r["agreement"]),
        "kappa_ci": fmt_interval(r["kappa"]) or "",
        "failure_ci": _percent_ci(r["failure_rate"]),
        "agreement_text": fmt_stat(r["agreement"], percent=True),
        "has_failure_text": fmt_stat(r["agreement_has_failure"], percent=True),
        "no_failure_text": fmt_stat(r["agreement_no_failure"], percent=True),
        "kappa_text": fmt_stat(r["kappa"]),
        "parse_failure_text": fmt_stat(r["parse_failure_rate"], percent=True),
        "failure_text": fmt_stat(r["failure_rate"], percent=True),
        "verbosity_text": fmt_stat(r["verbosity"], digits=2),
        "verbosity_no_failure_text": fmt_stat(r["verbosity_no_failure"], digits=2),
        "verbosity_has_failure_text": fmt_stat(r["verbosity_has_failure"], digits=2),
    }


def leaderboard_page_context(
    *, study: Study | None, chosen: Sequence[str], report: dict | None = None
) -> dict:
    """Judges side by side: agreement with a study's majority (when a study is chosen), parse
    failures, failure rates and verbosity. ``report``: the leaderboard as stored
    (:func:`judging.services.leaderboard.leaderboard_get`); computed here when not given."""
    if report is None:
        report = judge_leaderboard(judges=judges_named(chosen), study=study)
    rows = [_leaderboard_row(r) for r in report["rows"]]
    chart = (
        bar_chart_svg(
            title="Agreement with the human majority",
            labels=[r["judge"] for r in rows],
            values=[r["agreement"]["value"] for r in rows],
            value_range=(0.0, 1.0),
            value_format="{:.1%}",
            axis_label=f"share of items of {study.name}",
            id_prefix="leaderboard-agreement",
        )
        if study is not None and rows
        else ""
    )
    return {
        "rows": rows,
        "study": study,
        "chart": chart,
        "studies": Study.objects.order_by("-created_at")[:PICK_LIMIT],
    }
