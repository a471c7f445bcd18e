"""``{% disagreement_summary study judge %}``: the validation page's disagreement section (the
confusion table's cells as links to their items, and the step overlap with its CI), rendered
from :func:`judging.selectors.disagreements_pages.summary_context`."""

from __future__ import annotations

from django import template

from judging.selectors.disagreements_pages import summary_context

register = template.Library()


@register.inclusion_tag("judging/compare/_disagreements_summary.html")
def disagreement_summary(study, judge) -> dict:
    return summary_context(study=study, judge=judge)
