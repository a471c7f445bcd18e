"""What the validation page's probes partial (``validation/probes/_probes.html``) shows: the
report of :mod:`validation.probes.reads` formatted once (:mod:`core.formatting`) and the
reliability diagram (:func:`core.charts.line_chart_svg`). Missing data is said in words."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from core.charts import line_chart_svg
from core.formatting import fmt_interval, fmt_number, fmt_percent, fmt_stat
from judging.models import Judge
from validation.probes.reads import judge_probes


def _stat(stat: dict) -> dict[str, str]:
    return {
        "value": fmt_stat(stat, undefined="—"),
        "ci": fmt_interval(stat) or "",
        "why": stat.get("undefined") or "",
    }


def reliability_svg(calibration: dict, *, judge: str) -> str:
    """The reliability diagram: observed human failure rate against the judge's mean vote share
    per non-empty bin, beside the diagonal of perfect calibration."""
    points = [
        (b["mean_confidence"], b["observed_rate"], f"{b['low']:.1f}–{b['high']:.1f}, n {b['n']}")
        for b in calibration["bins"]
        if b["n"]
    ]
    return line_chart_svg(
        title=f"Reliability of {judge}'s vote share",
        series=[
            ("perfect calibration", [(0.0, 0.0, "0"), (1.0, 1.0, "1")]),
            (f"{judge} (bins of vote share)", points),
        ],
        x_label="judge's vote share for has_failure (mean per bin)",
        y_label="human majority has_failure (share)",
        y_range=(0.0, 1.0),
        value_format="{:.2f}",
        id_prefix="probes-reliability",
    )


def _length(lb: dict) -> dict[str, str]:
    if lb.get("odds_ratio") is None:
        return {"value": "—", "ci": "", "p": "", "why": lb.get("undefined") or "not computed"}
    return {
        "value": fmt_number(lb["odds_ratio"], 2),
        "ci": f"{fmt_percent(lb['confidence'], 0)} CI "
        f"{fmt_number(lb['ci_low'], 2)} – {fmt_number(lb['ci_high'], 2)}",
        "p": fmt_number(lb["p_value"], 3),
        "why": lb.get("note") or "",
    }


def probes_context(
    *, study: Study, judge: Judge, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    report = judge_probes(study=study, judge=judge, n_resamples=n_resamples, seed=seed)
    calibration = report["calibration"]
    return {
        "report": report,
        "ece": _stat(calibration["ece"]),
        "brier": _stat(calibration["brier"]),
        "bins": [
            {
                "range": f"{b['low']:.1f} – {b['high']:.1f}",
                "n": b["n"],
                "confidence": fmt_number(b["mean_confidence"], 2, undefined="—"),
                "observed": fmt_number(b["observed_rate"], 2, undefined="—"),
            }
            for b in calibration["bins"]
            if b["n"]
        ],
        "reliability": reliability_svg(calibration, judge=judge.name)
        if calibration["n_items"]
        else "",
        "length": _length(report["length_bias"]),
    }
