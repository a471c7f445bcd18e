"""A study's target in words (pure): half-widths in points of How2Score, the note shown once
the target was reached and the reason logged with the Prolific pause."""

from __future__ import annotations

from datetime import datetime


def points(half_width: float | None) -> str:
    """A half-width in points of How2Score, to a hundredth (a width just under the target is
    not shown as equal to it): 0.04234 → "±4.23 points"."""
    if half_width is None:
        return "—"
    return f"±{100 * half_width:.2f} points"


def stopped_note(*, at: datetime, interval: dict) -> str:
    """``Stopped on <date>: the interval ±x reached the target ±y with n labels.``"""
    n = interval.get("n_labels")
    labels = f" with {n:,} label{'s' if n != 1 else ''}" if isinstance(n, int) else ""
    return (
        f"Stopped on {at:%Y-%m-%d %H:%M} UTC: the interval {points(interval.get('half_width'))} "
        f"reached the target {points(interval.get('target'))}{labels}."
    )


def reached_reason(study) -> str:
    """Why the app paused recruitment (the logged Prolific call's summary)."""
    interval = study.target_reached_interval or {}
    n = interval.get("n_labels")
    return (
        f"the target interval was reached: {points(interval.get('half_width'))} ≤ target "
        f"{points(interval.get('target'))}" + (f" with {n} labels" if n is not None else "")
    )
