"""The agreement report's plots (:func:`report_plots`), drawn by :mod:`core.charts` (the one
home of the project's SVG drawing)."""

from __future__ import annotations

from collections.abc import Mapping

from core.charts import bar_chart_svg, confusion_matrix_svg
from core.formatting import stat_value


def _interval(stat: Mapping | None) -> tuple[float, float] | None:
    ci = (stat or {}).get("ci") or {}
    return (ci["low"], ci["high"]) if ci.get("low") is not None else None


MAX_ANNOTATOR_BARS = 60  # past it, the leave-one-out plot counts annotators per band
MAX_CONFUSION_PLOTS = 12  # confusion tables drawn when only the lowest-κ pairs are listed


def report_plots(report: Mapping) -> dict[str, str]:
    """The standard plots for a report dict from :func:`annotation.agreement_report.build_report`.

    Keys: ``label_distribution``, ``leave_one_out``, ``alpha`` (label and first-failure α
    with CIs), ``alpha_by_<column>`` per group column, ``confusion_<a>_<b>`` per annotator pair.
    """
    plots: dict[str, str] = {}
    dist = report["label_distribution"]["overall"]
    plots["label_distribution"] = bar_chart_svg(
        title="Label distribution",
        labels=list(dist),
        values=list(dist.values()),
        value_format="{:.0f}",
        axis_label="labels",
        id_prefix="plot-label-distribution",
    )
    loo = report["leave_one_out"]["annotators"]
    if len(loo) <= MAX_ANNOTATOR_BARS:
        plots["leave_one_out"] = bar_chart_svg(
            title="Leave-one-out agreement with the others' majority",
            labels=[r["annotator_id"] for r in loo],
            values=[stat_value(r["agreement"]) for r in loo],
            value_range=(0.0, 1.0),
            value_format="{:.1%}",
            axis_label="share of items",
            id_prefix="plot-leave-one-out",
        )
    else:  # thousands of annotators: how many fall in each tenth
        values = [v for r in loo if (v := stat_value(r["agreement"])) is not None]
        bins = [0] * 10
        for v in values:
            bins[min(int(v * 10), 9)] += 1
        plots["leave_one_out"] = bar_chart_svg(
            title="Leave-one-out agreement with the others' majority: annotators per band",
            labels=[f"{10 * b}–{10 * b + 10}%" for b in range(10)],
            values=bins,
            value_format="{:.0f}",
            axis_label="annotators",
            id_prefix="plot-leave-one-out",
        )
    alphas = [("label", report["alpha"])]
    if report.get("first_failure"):
        alphas.append(("first-failure location", report["first_failure"]["alpha"]))
    plots["alpha"] = bar_chart_svg(
        title="Krippendorff's alpha (95% bootstrap CI)",
        labels=[a for a, _ in alphas],
        values=[stat_value(s) for _, s in alphas],
        intervals=[_interval(s) for _, s in alphas],
        value_range=(-1.0, 1.0),
        axis_label="alpha",
        id_prefix="plot-alpha",
    )
    for column, groups in report.get("groups", {}).items():
        plots[f"alpha_by_{column}"] = bar_chart_svg(
            title=f"Krippendorff's alpha by {column}",
            labels=[str(g["group"]) for g in groups],
            values=[stat_value(g["alpha"]) for g in groups],
            intervals=[_interval(g["alpha"]) for g in groups],
            value_range=(-1.0, 1.0),
            axis_label="alpha",
            id_prefix=f"plot-alpha-by-{column}",
        )
    names = report["categories"]
    listed = report["cohen_kappa"]["pairs"]
    if report["cohen_kappa"].get("pairs_listed") == "lowest":
        listed = listed[:MAX_CONFUSION_PLOTS]
    for n, pair in enumerate(listed):
        a, b = pair["annotator_a"], pair["annotator_b"]
        plots[f"confusion_{a}_{b}"] = confusion_matrix_svg(
            title=f"{a} vs {b}",
            row_labels=names,
            col_labels=names,
            counts=pair["confusion"],
            row_title=a,
            col_title=b,
            id_prefix=f"plot-confusion-{n}",
        )
    return plots
