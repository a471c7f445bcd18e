"""A server-side SVG line chart for the analyses (one line per series, e.g. per checkpoint
family), in the style of :mod:`annotation.plots`: no JavaScript, ``role="img"`` with a title and
a description, every point's value as text in a per-point ``<title>`` and in the legend, so
nothing is conveyed by colour alone."""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

from annotation.plots import _id_prefix, _open_svg

FONT = 'font-family="system-ui, sans-serif"'
COLOURS = ("#3b6ea8", "#c4622d", "#3f8f4e", "#8a4fa3", "#a8872f", "#2f8f8f", "#b8476b")
MARKERS = ("circle", "square", "triangle", "diamond")
AXIS = "#555555"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


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
) -> str:
    """``series``: (name, [(x, y, point label)]) — one line per series, points joined in order.
    ``log_x`` for FLOPs (non-positive x are left out and said so in the description)."""
    prefix = _id_prefix(title, id_prefix)
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
    out = _open_svg(width, height, title, desc, prefix)
    out.append(
        f'<text x="{left}" y="18" {FONT} font-size="14" font-weight="600">{escape(title)}</text>'
    )
    for t in _ticks(y_lo, y_hi):
        y = py(t)
        out.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" {FONT} font-size="11" text-anchor="end">{escape(_fmt(t))}</text>'
        )
    for t in _ticks(x_lo, x_hi):
        x = left + (t - x_lo) / (x_hi - x_lo) * plot_w
        label = _fmt(10**t) if log_x else _fmt(t)
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" {FONT} font-size="11" text-anchor="middle">{escape(label)}</text>'
        )
    out.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="{AXIS}"/>'
    )
    out.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="{AXIS}"/>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 34}" {FONT} font-size="12" text-anchor="middle">{escape(x_label + (" (log scale)" if log_x else ""))}</text>'
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
