"""``{% diff_rows rows %}``: the aligned rows of the long-output viewer as table rows.

A long output has thousands of rows; rendering each through the template engine cost most of
the page's time (docs/performance/index.md, "Long-output viewer"), so the rows are built here with Django's
escaping and the template keeps the page's structure."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def _cell(pieces: Iterable[tuple[str, str]]) -> str:
    return "".join(
        f"<mark>{conditional_escape(text)}</mark>"
        if kind == "changed"
        else conditional_escape(text)
        for kind, text in pieces
    )


def _index(value: int | None) -> str:
    return "" if value is None else str(int(value))


@register.simple_tag
def diff_rows(rows) -> SafeString:
    """``<tr>`` per row: kind class, the first divergence's id, line numbers and both cells."""
    out = []
    for r in rows:
        first = ' first-divergence" id="first-divergence' if r.first else ""
        out.append(
            f'<tr class="d-{r.kind}{first}" data-kind="{r.kind}">'
            f'<td class="ln">{_index(r.left_index)}</td><td>{_cell(r.left)}</td>'
            f'<td class="ln">{_index(r.right_index)}</td><td>{_cell(r.right)}</td></tr>'
        )
    return mark_safe("".join(out))  # every value above is escaped or an int


@register.simple_tag
def folded_rows(rows) -> SafeString:
    """The rows of a folded (equal) run: line numbers and the text, no kind markers."""
    out = [
        f'<tr class="d-equal"><td class="ln">{_index(r.left_index)}</td>'
        f'<td>{_cell(r.left)}</td><td class="ln">{_index(r.right_index)}</td>'
        f"<td>{_cell(r.right)}</td></tr>"
        for r in rows
    ]
    return mark_safe("".join(out))  # every value above is escaped or an int
