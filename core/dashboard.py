"""The home page's dashboard: one card per stage of the loop (mine, benchmark, generate, judge,
annotate, agree), each built by its app's selector.

Core sits below every app, so it names none: ``settings.HOME_DASHBOARD`` lists the card
selectors by dotted path (``"annotation.selectors.dashboard.annotate_card"`` …), in the order
shown. A selector is called as ``selector(user=request.user)`` and returns a :class:`Card`, or
``None`` when the user's role may not open that stage's pages (so it is not shown). Each runs
one query for its counts and latest figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.utils.module_loading import import_string


@dataclass
class Card:
    key: str  # mine | benchmark | generate | judge | annotate | agree (or an extra card)
    title: str
    blurb: str
    counts: list[tuple[str, str]] = field(default_factory=list)  # (number as text, label)
    running: int = 0  # runs or studies under way now
    running_label: str = "running"
    figure: str | None = None  # the latest figure as text ("58.3%", "0.603"); None: none yet
    figure_label: str = ""  # what the figure is ("yield of the latest batch")
    empty_reason: str = ""  # why there is no figure yet
    link: str = ""  # the stage's page
    link_label: str = ""
    action: str = ""  # what would fill an empty card
    action_label: str = ""
    items: list[tuple[str, str, str]] = field(default_factory=list)  # (name, link, note) rows


def home_cards(*, user) -> list[Card]:
    """The cards this user may see, in ``settings.HOME_DASHBOARD`` order."""
    cards = []
    for path in getattr(settings, "HOME_DASHBOARD", ()):
        card = import_string(path)(user=user)
        if card is not None:
            cards.append(card)
    return cards


def counts(**querysets) -> dict[str, int]:
    """``{name: queryset.count()}`` for querysets of any tables, in ONE query (a SELECT of
    scalar ``COUNT(*)`` subqueries), so a card costs one round trip however many counts it
    shows. All querysets must use the same database."""
    from django.db import connections

    if not querysets:
        return {}
    parts, params, alias = [], [], None
    for i, qs in enumerate(querysets.values()):
        alias = alias or qs.db
        sql, p = qs.order_by().values("pk").query.sql_with_params()
        parts.append(f"(SELECT COUNT(*) FROM ({sql}) AS c{i})")
        params.extend(p)
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), params)
        row = cursor.fetchone()
    return {name: int(value or 0) for name, value in zip(querysets, row, strict=True)}


def count_of(queryset):
    """The number of rows of ``queryset`` as an expression (a scalar ``COUNT`` subquery), to
    annotate on the row a card names (its batch, run or study), so the row and every count come
    back in the card's one query. ``queryset`` may use ``OuterRef``."""
    from django.db.models import Func, IntegerField, Subquery, Value

    counted = queryset.order_by().annotate(
        _n=Func(Value(1), function="COUNT", output_field=IntegerField())
    )
    return Subquery(counted.values("_n")[:1], output_field=IntegerField())
