"""Stored JSON as the console (Django admin) shows it where it is read, not typed: a run's
result, a judgment's failures, a batch's options — as nested lists a person reads, never as
JSON text with ``null``, ``true`` and quoted keys.

Django shows a read-only JSON field (and a JSON column of a list) as ``json.dumps`` of its value.
:func:`show_json_readably` (called once at start-up, :mod:`core.apps`) makes the console show it
through :func:`json_html` instead; JSON boxes a person edits stay JSON
(:mod:`core.admin_a11y`).

- an object: a definition list, its keys as stored;
- a list: its values joined with commas when they are all plain values, else a numbered list;
- no value (``null``), an empty list or object: the console's empty mark (``-``);
- true / false: yes / no;
- a statistic that could not be computed — the project's ``{"value": null, "undefined":
  "reason"}`` (:mod:`annotation.agreement.matrix`) — the empty mark with its reason:
  ``- (no item submitted)``.

Every stored text is escaped; the console shows a newline inside one as a line break.
"""

from __future__ import annotations

from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

EMPTY_MARK = "-"  # Django's own empty_value_display


def json_html(value: Any, empty: str = EMPTY_MARK) -> SafeString:
    """``value`` (what a JSON field holds) as readable HTML; ``empty`` for no value."""
    if value is None or value == [] or value == {}:
        return format_html("{}", empty)
    if isinstance(value, bool):
        return format_html("{}", "yes" if value else "no")
    if isinstance(value, int | float | str):
        return format_html("{}", value)
    if isinstance(value, dict):
        if value.get("value") is None and isinstance(value.get("undefined"), str):
            return format_html("{} ({})", empty, value["undefined"])
        return format_html(
            '<dl class="json">{}</dl>',
            format_html_join(
                "", "<dt>{}</dt><dd>{}</dd>", ((k, json_html(v, empty)) for k, v in value.items())
            ),
        )
    if isinstance(value, list | tuple):
        if all(isinstance(v, int | float | str | bool) for v in value):
            return format_html_join(", ", "{}", ((json_html(v, empty),) for v in value))
        return format_html(
            '<ol class="json">{}</ol>',
            format_html_join("", "<li>{}</li>", ((json_html(v, empty),) for v in value)),
        )
    return format_html("{}", value)


def show_json_readably() -> None:
    """Read-only JSON fields and JSON columns of the console through :func:`json_html`: the
    function Django's change form and change list call for a field's value, wrapped once."""
    from django.contrib.admin import helpers
    from django.contrib.admin.templatetags import admin_list
    from django.db import models

    plain = helpers.display_for_field
    if getattr(plain, "shows_json_readably", False):
        return

    def display_for_field(value, field, empty_value_display, *args, **kwargs):
        if isinstance(field, models.JSONField) and not getattr(field, "flatchoices", None):
            return json_html(value, empty_value_display)
        return plain(value, field, empty_value_display, *args, **kwargs)

    display_for_field.shows_json_readably = True
    helpers.display_for_field = display_for_field
    admin_list.display_for_field = display_for_field
