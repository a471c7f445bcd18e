"""Template filters over :mod:`core.formatting` (``{% load core_format %}``); a missing value
shows as a dash.

- ``{{ share|percent }}`` → ``84.7%``; ``{{ share|percent:0 }}`` → ``85%``;
- ``{{ value|number }}`` → ``0.593``; ``{{ value|number:2 }}`` → ``0.59``.
"""

from __future__ import annotations

from django import template

from core.formatting import DASH, fmt_number, fmt_percent

register = template.Library()


@register.filter
def percent(value, digits=1) -> str:
    return fmt_percent(_number(value), int(digits), undefined=DASH)


@register.filter
def number(value, digits=3) -> str:
    return fmt_number(_number(value), int(digits), undefined=DASH)


def _number(value) -> float | None:
    """A template's value as a float; ``None``, ``""`` and anything not a number are missing."""
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
