"""Numbers, shares and statistics as text, one home (pages, plots, text reports, commands).

- :func:`fmt_number`: ``0.5934`` → ``"0.593"`` (``digits`` decimals, 3 by default).
- :func:`fmt_percent`: a share ``0.8467`` → ``"84.7%"`` (``digits`` decimals, 1 by default).
- :func:`fmt_value`: a value through any ``str.format`` template (``"{:.1f}"``).
- :func:`fmt_stat`: a statistic dict ``{"value": float | None, "undefined": reason}``.
- :func:`fmt_interval`: its confidence interval ``{"confidence", "low", "high"}``.
- :func:`fmt_count`: a count and its noun, singular or plural (``1 page``, ``2 pages``): the
  one home for counted nouns in text built in Python (templates use Django's ``pluralize``).

A missing value (``None``) is never NaN, ``None`` or "undefined" on a page: it is a
:class:`Missing` — a dash, and the reason in small type (``— <small>no items in common</small>``
in HTML, ``— no items in common`` as plain text) — or whatever the caller's ``undefined`` says
(``"n/a"``, ``"undefined ({reason})"`` in a plain-text report). Rounding is Python's (round
half to even on the binary value), the same for every caller. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

DASH = "—"
UNDEFINED = DASH
UNDEFINED_WITH_REASON = "— {reason}"  # on pages: a Missing (the reason in small type)


class Missing(str):
    """What is shown for a missing value: a dash, and why, in small type. A ``str`` (plain
    text ``"— <reason>"``, so it can be joined, compared and exported) that templates render
    through ``__html__`` as ``— <small class="missing">reason</small>``."""

    reason: str

    def __new__(cls, reason: str = "") -> Missing:
        reason = str(reason or "").strip()
        obj = super().__new__(cls, f"{DASH} {reason}" if reason else DASH)
        obj.reason = reason
        return obj

    def __html__(self) -> str:
        if not self.reason:
            return DASH
        return f'{DASH} <small class="missing">{escape(self.reason)}</small>'


def fmt_value(value: float | None, template: str = "{:.3f}", *, undefined: str = UNDEFINED) -> str:
    """``template.format(value)``, or ``undefined`` when ``value`` is ``None``."""
    return undefined if value is None else template.format(value)


def fmt_number(value: float | None, digits: int = 3, *, undefined: str = UNDEFINED) -> str:
    """``value`` with ``digits`` decimals: ``fmt_number(0.5934)`` → ``"0.593"``."""
    return fmt_value(value, f"{{:.{digits}f}}", undefined=undefined)


def fmt_percent(value: float | None, digits: int = 1, *, undefined: str = UNDEFINED) -> str:
    """A share as a percentage: ``fmt_percent(0.8467)`` → ``"84.7%"``."""
    return fmt_value(value, f"{{:.{digits}%}}", undefined=undefined)


def stat_value(stat: Mapping[str, Any] | None) -> float | None:
    """The value of a statistic dict (``None`` for a missing or undefined statistic)."""
    return (stat or {}).get("value")


def fmt_stat(
    stat: Mapping[str, Any] | None,
    *,
    percent: bool = False,
    digits: int | None = None,
    undefined: str | None = None,
) -> str:
    """A statistic as text: its value by :func:`fmt_percent` (``percent``) or
    :func:`fmt_number`; undefined, a :class:`Missing` with the statistic's reason (its
    ``"undefined"``; ``"no value"`` when it gives none), or the caller's own ``undefined``
    template with ``{reason}`` filled in."""
    value = stat_value(stat)
    if value is None:
        reason = (stat or {}).get("undefined") or "no value"
        if undefined is None or undefined == UNDEFINED_WITH_REASON:
            return Missing(reason)
        return undefined.format(reason=reason)
    if percent:
        return fmt_percent(value, 1 if digits is None else digits)
    return fmt_number(value, 3 if digits is None else digits)


def fmt_interval(stat: Mapping[str, Any] | None, digits: int = 3) -> str | None:
    """A statistic's confidence interval: ``"95% CI 0.300 – 0.700"``; ``None`` when it has no
    interval (the reason, if any, is in ``stat["ci"]["undefined"]``)."""
    ci = (stat or {}).get("ci") or {}
    if ci.get("low") is None:
        return None
    low, high = fmt_number(ci["low"], digits), fmt_number(ci["high"], digits)
    return f"{fmt_percent(ci['confidence'], 0)} CI {low} – {high}"


def fmt_count(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun it counts: ``1 page``, ``0 pages``, ``1,200 items``; ``plural`` for
    a noun whose plural is not ``singular + "s"`` (``fmt_count(2, "match", "matches")``)."""
    noun = singular if n == 1 else (plural or f"{singular}s")
    return f"{n:,} {noun}"
