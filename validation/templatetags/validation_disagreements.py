"""``{% disagreement_summary study judge %}``: the validation page's disagreement section (the
confusion table's cells as links to their items, and the step overlap with its CI), rendered
from :func:`validation.disagreements.page.summary_context`."""

from __future__ import annotations

from django import template

from validation.disagreements.page import summary_context

register = template.Library()


@register.inclusion_tag("validation/disagreements/_disagreements_summary.html")
def disagreement_summary(study, judge) -> dict:
    return summary_context(study=study, judge=judge)
