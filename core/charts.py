"""Server-rendered SVG charts: no JavaScript, no Django, no plotting library. The one home of
the project's SVG drawing (the agreement report's plots, :mod:`annotation.plots`; the judges'
comparison, validation and score pages; the analyses' scaling charts).

Each function returns one ``<svg>`` element as a string, safe to put in a template with
``|safe`` (every text is XML-escaped here). Accessibility: ``role="img"`` with a ``<title>``
and ``<desc>`` referenced by ``aria-labelledby``; every value is also printed as text and in
a per-mark ``<title>`` (a tooltip), so nothing is conveyed by colour alone.

- :func:`bar_chart_svg` — horizontal bars, optional interval whiskers (α with its CI),
  negative values drawn left of a zero line, a missing value labelled "no value" in small
  type; the label column as wide as the longest label (none is clipped).
- :func:`confusion_matrix_svg` — a counts heat map (two annotators, or judge vs. majority).
- :func:`line_chart_svg` — one line per series (e.g. per checkpoint family), markers and a
  legend so series differ by more than colour.
- :func:`chart_id` and :func:`open_svg` — the ids and opening elements every chart shares.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from core.formatting import fmt_value

FONT = 'font-family="system-ui, sans-serif"'
BAR = "#3b6ea8"
AXIS = "#555555"
COLOURS = ("#3b6ea8", "#c4622d", "#3f8f4e", "#8a4fa3", "#a8872f", "#2f8f8f", "#b8476b")
MARKERS = ("circle", "square", "triangle", "diamond")
NO_VALUE = "no value"  # what a missing value's bar says (small type)


def chart_id(title: str, explicit: str | None) -> str:
    if explicit:
        return re.sub(r"[^A-Za-z0-9_-]", "-", explicit)
    return "plot-" + hashlib.sha1(title.encode("utf-8")).hexdigest()[:10]


def open_svg(width: float, height: float, title: str, description: str, prefix: str) -> list[str]:
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

    ``values`` may hold ``None`` (an undefined statistic: no bar, "no value" in small type).
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
    prefix = chart_id(title, id_prefix)
    # the label column fits the longest label (about 7 px a character at 12 px), within reason
    longest = max((len(str(label)) for label in labels), default=0)
    label_w = min(max(170, 7 * longest + 12), width // 2)
    value_w, row_h, top, bottom = 90, 26, 34, 40
    plot_w = width - label_w - value_w - 10
    height = top + row_h * max(len(labels), 1) + bottom

    def x(v: float) -> float:
        v = min(max(v, lo), hi)
        return label_w + (v - lo) / (hi - lo) * plot_w

    if description is None:
        description = (
            "; ".join(
                f"{label}: {fmt_value(v, value_format, undefined=NO_VALUE)}"
                + (f" ({value_format.format(iv[0])} to {value_format.format(iv[1])})" if iv else "")
                for label, v, iv in zip(labels, values, intervals, strict=True)
            )
            or "no data"
        )
    out = open_svg(width, height, title, description, prefix)
    out.append(
        f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" font-size="14" '
        f'font-weight="bold" {FONT}>{escape(title)}</text>'
    )
    zero = x(0.0) if lo <= 0 <= hi else x(lo)
    for i, (label, value, interval) in enumerate(zip(labels, values, intervals, strict=True)):
        y = top + i * row_h
        text = fmt_value(value, value_format, undefined=NO_VALUE)
        out.append('<g class="bar">')
        out.append(f"<title>{escape(f'{label}: {text}')}</title>")
        out.append(
            f'<text x="{label_w - 6}" y="{y + row_h * 0.65:.1f}" text-anchor="end" '
            f'font-size="12" {FONT}>{escape(_fit(str(label), (label_w - 12) // 7))}</text>'
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
        small = 'font-size="10" fill="#555555"' if value is None else 'font-size="12"'
        out.append(
            f'<text x="{label_w + plot_w + 6}" y="{y + row_h * 0.65:.1f}" {small} '
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
    prefix = chart_id(title, id_prefix)
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
    out = open_svg(width, height, title, description, prefix)
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


def _fit(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters with an ellipsis (the whole text is in the tooltip)."""
    return text if len(text) <= n else text[: max(n - 1, 1)] + "…"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def nice_ticks(lo: float, hi: float, *, n: int = 5, integer: bool = False) -> list[float]:
    """Ticks a reader reads at a glance between ``lo`` and ``hi``: multiples of 1, 2, 2.5 or 5
    times a power of ten, about ``n`` of them, the range's ends included when they fall on one
    (``integer``: whole numbers only, for counts such as steps)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * 0.999)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    return ticks or [lo, hi]


def log_ticks(lo: float, hi: float, *, most: int = 7) -> list[float]:
    """Ticks of a log axis from 10**lo to 10**hi: the range's ends and the values 1, 2 and 5
    times a power of ten between them (powers of ten alone when those are too many)."""
    low, high = 10**lo, 10**hi
    inner = [
        m * 10**k
        for k in range(math.floor(lo) - 1, math.ceil(hi) + 1)
        for m in (1, 2, 5)
        if low * 1.15 < m * 10**k < high / 1.15
    ]
    if len(inner) + 2 > most:
        inner = [v for v in inner if math.log10(v).is_integer()]
    while len(inner) + 2 > most:
        inner = inner[::2]
    return [low, *inner, high]


def count_label(v: float) -> str:
    """A count as people write it: 500, 1K, 2K, 8K, 1.5M (3 significant digits)."""
    if abs(v) >= 1e12:  # FLOPs and the like: powers of ten
        return f"{v:.2g}"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(v) >= size:
            scaled = float(f"{v / size:.3g}")
            return f"{scaled:g}{suffix}"
    return f"{float(f'{v:.3g}'):g}"


def _fmt(v: float) -> str:
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-2):
        return f"{v:.2g}"
    return f"{v:g}" if float(v).is_integer() else f"{v:.3g}"


def _marker(kind: str, x: float, y: float, colour: str, tip: str) -> str:
    title = f"<title>{escape(tip)}</title>"
    if kind == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{colour}">{title}</rect>'
    if kind == "triangle":
        pts = f"{x:.1f},{y - 5:.1f} {x - 5:.1f},{y + 4:.1f} {x + 5:.1f},{y + 4:.1f}"
        return f'<polygon points="{pts}" fill="{colour}">{title}</polygon>'
    if kind == "diamond":
        pts = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
        return f'<polygon points="{pts}" fill="{colour}">{title}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}">{title}</circle>'


def line_chart_svg(
    *,
    title: str,
    series: Sequence[tuple[str, Sequence[tuple[float, float, str]]]],
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] | None = None,
    log_x: bool = False,
    value_format: str = "{:.1f}",
    description: str | None = None,
    id_prefix: str | None = None,
    width: int = 620,
    height: int = 340,
    y_integer: bool = False,
) -> str:
    """``series``: (name, [(x, y, point label)]) — one line per series, points joined in order.
    ``log_x`` for FLOPs and token counts (non-positive x are left out and said so in the
    description; ticks read 500, 1K, 2K …; the axis label says "log scale" once).
    ``y_integer``: the y ticks are whole numbers (a count, such as steps)."""
    prefix = chart_id(title, id_prefix)
    left, right, top, legend_h = 64, 20, 30, 22 * max(len(series), 1)
    bottom = 48 + legend_h
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [(x, y) for _, pts in series for x, y, _ in pts if not log_x or x > 0]
    xs = [math.log10(x) if log_x else x for x, _ in points]
    ys = [y for _, y in points]
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_hi <= x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_lo, y_hi = y_range if y_range else ((min(ys), max(ys)) if ys else (0.0, 1.0))
    if y_hi <= y_lo:
        y_hi = y_lo + 1

    def px(x: float) -> float:
        v = math.log10(x) if log_x else x
        return left + (v - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h

    texts = []
    for name, pts in series:
        values = ", ".join(f"{label}: {value_format.format(y)}" for _, y, label in pts)
        texts.append(f"{name}: {values or 'no points'}")
    desc = description or f"{y_label} against {x_label}. " + "; ".join(texts)
    out = open_svg(width, height, title, desc, prefix)
    out.append(
        f'<text x="{left}" y="18" {FONT} font-size="14" font-weight="600">{escape(title)}</text>'
    )
    for t in nice_ticks(y_lo, y_hi, integer=y_integer):
        y = py(t)
        out.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" {FONT} font-size="11" text-anchor="end">{escape(_fmt(t))}</text>'
        )
    x_ticks = [math.log10(v) for v in log_ticks(x_lo, x_hi)] if log_x else _ticks(x_lo, x_hi)
    for t in x_ticks:
        x = left + (t - x_lo) / (x_hi - x_lo) * plot_w
        label = count_label(10**t) if log_x else _fmt(t)
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" {FONT} font-size="11" text-anchor="middle">{escape(label)}</text>'
        )
    out.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="{AXIS}"/>'
    )
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="{AXIS}"/>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 34}" {FONT} font-size="12" text-anchor="middle">{escape(x_label + (" (log scale)" if log_x and "log scale" not in x_label else ""))}</text>'
    )
    out.append(
        f'<text transform="translate(14 {top + plot_h / 2:.1f}) rotate(-90)" {FONT} font-size="12" text-anchor="middle">{escape(y_label)}</text>'
    )
    for i, (name, pts) in enumerate(series):
        colour, marker = COLOURS[i % len(COLOURS)], MARKERS[i % len(MARKERS)]
        shown = [(x, y, label) for x, y, label in pts if not log_x or x > 0]
        if len(shown) > 1:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _ in shown)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        for x, y, label in shown:
            out.append(
                _marker(marker, px(x), py(y), colour, f"{name} · {label}: {value_format.format(y)}")
            )
        ly = top + plot_h + 52 + 22 * i
        out.append(_marker(marker, left + 6, ly - 4, colour, name))
        out.append(f'<text x="{left + 16}" y="{ly}" {FONT} font-size="12">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)
