"""Server-rendered SVG plots for the agreement report: no JavaScript, no Django, no plotting library.

Each function returns one ``<svg>`` element as a string, safe to put in a template with
``|safe`` (every text is XML-escaped here). Accessibility: ``role="img"`` with a ``<title>``
and ``<desc>`` referenced by ``aria-labelledby``; every value is also printed as text and in
a per-mark ``<title>`` (a tooltip), so nothing is conveyed by colour alone.

- :func:`bar_chart_svg` — horizontal bars, optional interval whiskers (α with its CI),
  negative values drawn left of a zero line, undefined values labelled "undefined".
- :func:`confusion_matrix_svg` — a counts heat map (two annotators, or judge vs. majority).
- :func:`report_plots` — the standard plots for an :mod:`annotation.agreement_report` dict.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from core.formatting import fmt_value, stat_value

FONT = 'font-family="system-ui, sans-serif"'
BAR = "#3b6ea8"
AXIS = "#555555"


def _id_prefix(title: str, explicit: str | None) -> str:
    if explicit:
        return re.sub(r"[^A-Za-z0-9_-]", "-", explicit)
    return "plot-" + hashlib.sha1(title.encode("utf-8")).hexdigest()[:10]


def _open_svg(width: float, height: float, title: str, description: str, prefix: str) -> list[str]:
    return [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'aria-labelledby="{prefix}-title {prefix}-desc">'
        ),
        f'<title id="{prefix}-title">{escape(title)}</title>',
        f'<desc id="{prefix}-desc">{escape(description)}</desc>',
    ]


def bar_chart_svg(
    *,
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[tuple[float, float] | None] | None = None,
    value_range: tuple[float, float] | None = None,
    value_format: str = "{:.3f}",
    axis_label: str = "",
    description: str | None = None,
    id_prefix: str | None = None,
    width: int = 560,
) -> str:
    """A horizontal bar chart: one row per label, the value printed at the end of each bar.

    ``values`` may hold ``None`` (an undefined statistic: no bar, the word "undefined").
    ``intervals`` draws a whisker per bar (e.g. a bootstrap CI). ``value_range`` fixes the
    axis (e.g. (-1, 1) for α); by default it spans 0 and every value and interval.
    """
    if len(labels) != len(values):
        raise ValueError("labels and values must have the same length")
    if intervals is not None and len(intervals) != len(values):
        raise ValueError("intervals and values must have the same length")
    intervals = list(intervals) if intervals is not None else [None] * len(values)
    numbers = [v for v in values if v is not None]
    numbers += [x for iv in intervals if iv is not None for x in iv]
    lo, hi = value_range if value_range else (min([0.0, *numbers]), max([0.0, *numbers]))
    if hi <= lo:
        hi = lo + 1.0
    prefix = _id_prefix(title, id_prefix)
    label_w, value_w, row_h, top, bottom = 170, 90, 26, 34, 40
    plot_w = width - label_w - value_w - 10
    height = top + row_h * max(len(labels), 1) + bottom

    def x(v: float) -> float:
        v = min(max(v, lo), hi)
        return label_w + (v - lo) / (hi - lo) * plot_w

    if description is None:
        description = (
            "; ".join(
                f"{label}: {fmt_value(v, value_format)}"
                + (f" ({value_format.format(iv[0])} to {value_format.format(iv[1])})" if iv else "")
                for label, v, iv in zip(labels, values, intervals, strict=True)
            )
            or "no data"
        )
    out = _open_svg(width, height, title, description, prefix)
    out.append(
        f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" font-size="14" '
        f'font-weight="bold" {FONT}>{escape(title)}</text>'
    )
    zero = x(0.0) if lo <= 0 <= hi else x(lo)
    for i, (label, value, interval) in enumerate(zip(labels, values, intervals, strict=True)):
        y = top + i * row_h
        text = fmt_value(value, value_format)
        out.append('<g class="bar">')
        out.append(f"<title>{escape(f'{label}: {text}')}</title>")
        out.append(
            f'<text x="{label_w - 6}" y="{y + row_h * 0.65:.1f}" text-anchor="end" '
            f'font-size="12" {FONT}>{escape(str(label))}</text>'
        )
        if value is not None:
            left, right = sorted((zero, x(value)))
            out.append(
                f'<rect x="{left:.1f}" y="{y + 4}" width="{max(right - left, 1):.1f}" '
                f'height="{row_h - 8}" fill="{BAR}"/>'
            )
        if interval is not None:
            a, b = x(interval[0]), x(interval[1])
            mid = y + row_h / 2
            out.append(
                f'<path d="M{a:.1f} {mid:.1f}H{b:.1f}M{a:.1f} {mid - 5:.1f}V{mid + 5:.1f}'
                f'M{b:.1f} {mid - 5:.1f}V{mid + 5:.1f}" stroke="#111" stroke-width="1.5" fill="none"/>'
            )
        out.append(
            f'<text x="{label_w + plot_w + 6}" y="{y + row_h * 0.65:.1f}" font-size="12" '
            f"{FONT}>{escape(text)}</text>"
        )
        out.append("</g>")
    axis_y = top + row_h * max(len(labels), 1)
    out.append(
        f'<line x1="{zero:.1f}" y1="{top - 4}" x2="{zero:.1f}" y2="{axis_y}" stroke="{AXIS}"/>'
    )
    out.append(
        f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + plot_w}" y2="{axis_y}" stroke="{AXIS}"/>'
    )
    for tick in (lo, (lo + hi) / 2, hi):
        out.append(
            f'<text x="{x(tick):.1f}" y="{axis_y + 14}" text-anchor="middle" font-size="10" '
            f'fill="{AXIS}" {FONT}>{escape(f"{tick:g}")}</text>'
        )
    if axis_label:
        out.append(
            f'<text x="{label_w + plot_w / 2:.1f}" y="{axis_y + 32}" text-anchor="middle" '
            f'font-size="12" {FONT}>{escape(axis_label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def confusion_matrix_svg(
    *,
    title: str,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    counts: Sequence[Sequence[int]],
    row_title: str = "",
    col_title: str = "",
    description: str | None = None,
    id_prefix: str | None = None,
    cell: int = 56,
) -> str:
    """A heat map of counts: rows = ``row_title``'s label, columns = ``col_title``'s label.

    Darker = more items; every cell prints its count and has a tooltip naming both labels.
    """
    if len(counts) != len(row_labels) or any(len(r) != len(col_labels) for r in counts):
        raise ValueError("counts must have one row per row label and one column per column label")
    prefix = _id_prefix(title, id_prefix)
    cell = max(cell, 7 * max((len(str(c)) for c in col_labels), default=0) + 12)
    left, top = 150, 70
    width = left + cell * len(col_labels) + 20
    height = top + cell * len(row_labels) + 30
    peak = max([c for row in counts for c in row] + [0])
    total = sum(c for row in counts for c in row)
    if description is None:
        agree = sum(
            counts[i][i]
            for i in range(min(len(row_labels), len(col_labels)))
            if row_labels[i] == col_labels[i]
        )
        description = (
            f"{total} items; {agree} on the diagonal (same label). Rows: {row_title}; "
            f"columns: {col_title}. "
            + "; ".join(
                f"{r} / {c}: {counts[i][j]}"
                for i, r in enumerate(row_labels)
                for j, c in enumerate(col_labels)
            )
        )
    out = _open_svg(width, height, title, description, prefix)
    out.append(
        f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="14" '
        f'font-weight="bold" {FONT}>{escape(title)}</text>'
    )
    if col_title:
        out.append(
            f'<text x="{left + cell * len(col_labels) / 2:.1f}" y="40" text-anchor="middle" '
            f'font-size="12" {FONT}>{escape(col_title)}</text>'
        )
    if row_title:
        out.append(
            f'<text x="12" y="{top + cell * len(row_labels) / 2:.1f}" font-size="12" '
            f'transform="rotate(-90 12 {top + cell * len(row_labels) / 2:.1f})" '
            f'text-anchor="middle" {FONT}>{escape(row_title)}</text>'
        )
    for j, label in enumerate(col_labels):
        out.append(
            f'<text x="{left + cell * (j + 0.5):.1f}" y="{top - 8}" text-anchor="middle" '
            f'font-size="11" {FONT}>{escape(str(label))}</text>'
        )
    for i, row_label in enumerate(row_labels):
        y = top + cell * i
        out.append(
            f'<text x="{left - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" '
            f'font-size="11" {FONT}>{escape(str(row_label))}</text>'
        )
        for j, col_label in enumerate(col_labels):
            count = counts[i][j]
            share = count / peak if peak else 0.0
            # Light to dark blue; white text on dark cells for contrast.
            shade = (
                int(247 - share * (247 - 8)),
                int(251 - share * (251 - 48)),
                int(255 - share * (255 - 107)),
            )
            fill = "#{:02x}{:02x}{:02x}".format(*shade)
            ink = "#ffffff" if share > 0.5 else "#111111"
            x = left + cell * j
            tip = f"{row_title or 'row'} {row_label}, {col_title or 'column'} {col_label}: {count}"
            out.append('<g class="cell">')
            out.append(f"<title>{escape(tip)}</title>")
            out.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill={quoteattr(fill)} '
                f'stroke="#ffffff"/>'
            )
            out.append(
                f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 5:.1f}" text-anchor="middle" '
                f'font-size="13" fill="{ink}" {FONT}>{count}</text>'
            )
            out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def _interval(stat: Mapping | None) -> tuple[float, float] | None:
    ci = (stat or {}).get("ci") or {}
    return (ci["low"], ci["high"]) if ci.get("low") is not None else None


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
    plots["leave_one_out"] = bar_chart_svg(
        title="Leave-one-out agreement with the others' majority",
        labels=[r["annotator_id"] for r in loo],
        values=[stat_value(r["agreement"]) for r in loo],
        value_range=(0.0, 1.0),
        value_format="{:.1%}",
        axis_label="share of items",
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
    for n, pair in enumerate(report["cohen_kappa"]["pairs"]):
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
