"""Icons as inline SVG (``{% load core_icons %}{% icon "clock" %}``): no emoji, no icon font,
so they render the same on a machine without an emoji font. Each icon is a 24×24 stroke
drawing in ``currentColor``, hidden from screen readers (the text beside it says what it
means); ``{% icon "check" "Read" %}`` gives it an accessible name instead."""

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()

PATHS: dict[str, str] = {
    "clock": '<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>',
    "no-ai": '<circle cx="12" cy="12" r="9"/><path d="M5.6 5.6l12.8 12.8"/>',
    "search": '<circle cx="11" cy="11" r="6.5"/><path d="M16 16l4.5 4.5"/>',
    "warning": '<path d="M12 3.5L2.5 20h19z"/><path d="M12 10v4.5"/><path d="M12 17.2v.1"/>',
    "chat": '<path d="M4 5h16v11H9l-5 4z"/>',
    "check": '<path d="M4.5 12.5l5 5 10-11"/>',
    "close": '<path d="M6 6l12 12M18 6L6 18"/>',
    "mine": '<path d="M3 5h18l-7 8v6l-4 2v-8z"/>',
    "benchmark": '<path d="M5 4h14v16H5z"/><path d="M8.5 9h7M8.5 12.5h7M8.5 16h4"/>',
    "generate": '<path d="M12 3l1.8 4.7L18.5 9.5l-4.7 1.8L12 16l-1.8-4.7L5.5 9.5l4.7-1.8z"/>'
    '<path d="M18 15l.9 2.1 2.1.9-2.1.9-.9 2.1-.9-2.1-2.1-.9 2.1-.9z"/>',
    "judge": '<path d="M12 4v16M7 20h10M5 7h14"/><path d="M5 7l-2.5 6h5z"/>'
    '<path d="M19 7l-2.5 6h5z"/>',
    "annotate": '<path d="M4 20h4L19 9l-4-4L4 16z"/><path d="M13.5 6.5l4 4"/>',
    "agree": '<circle cx="8.5" cy="12" r="5"/><circle cx="15.5" cy="12" r="5"/>',
    "play": '<circle cx="12" cy="12" r="9"/><path d="M10 8.5v7l5.5-3.5z"/>',
    "link": '<path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1"/>'
    '<path d="M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/>',
    "copy": '<path d="M9 9h11v11H9z"/><path d="M5 15H4V4h11v1"/>',
    "check-circle": '<circle cx="12" cy="12" r="9"/><path d="M8 12.5l3 3 5-6"/>',
    "x-circle": '<circle cx="12" cy="12" r="9"/><path d="M9 9l6 6M15 9l-6 6"/>',
    "info": '<circle cx="12" cy="12" r="9"/><path d="M12 11v5.5"/><path d="M12 7.6v.1"/>',
    "lock": '<path d="M5 11h14v10H5z"/><path d="M8 11V7.5a4 4 0 0 1 8 0V11"/>',
    "list": '<path d="M9 6h11M9 12h11M9 18h11"/><path d="M4.5 6h.1M4.5 12h.1M4.5 18h.1"/>',
    "target": '<circle cx="12" cy="12" r="9"/><circle cx="12" cy="12" r="5"/>'
    '<circle cx="12" cy="12" r="1"/>',
    "pause": '<circle cx="12" cy="12" r="9"/><path d="M10 9v6M14 9v6"/>',
    "running": '<circle cx="12" cy="12" r="9"/><path d="M12 3a9 9 0 0 1 9 9"/>',
}


def icon_svg(name: str, label: str = "") -> str:
    """The SVG markup of icon ``name`` (KeyError for an unknown name: a typo fails loudly)."""
    paths = PATHS[name]
    a11y = f'role="img" aria-label="{escape(label)}"' if label else 'aria-hidden="true"'
    return (
        f'<svg class="icon icon-{name}" viewBox="0 0 24 24" width="1em" height="1em" '
        'fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" '
        f'stroke-linejoin="round" focusable="false" {a11y}>{paths}</svg>'
    )


@register.simple_tag
def icon(name: str, label: str = "") -> str:
    return mark_safe(icon_svg(name, label))
