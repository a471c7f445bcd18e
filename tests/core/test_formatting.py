"""core.formatting and its template filters: one rounding, one word for a missing value."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from core.formatting import (
    DASH,
    UNDEFINED_WITH_REASON,
    Missing,
    fmt_interval,
    fmt_number,
    fmt_percent,
    fmt_stat,
    fmt_value,
    stat_value,
)
from tests.support.purity import django_imports


@pytest.mark.parametrize(
    "value, digits, expected",
    [
        (0.5934, 3, "0.593"),
        (0.5935, 3, "0.594"),  # 0.5935 is stored a hair above: rounds up
        (0.125, 2, "0.12"),  # exactly half: round half to even
        (-0.0004, 3, "-0.000"),
        (2.0, 0, "2"),
        (1 / 3, 2, "0.33"),
    ],
)
def test_fmt_number(value, digits, expected):
    assert fmt_number(value, digits) == expected


@pytest.mark.parametrize(
    "value, digits, expected",
    [
        (0.8467, 1, "84.7%"),
        (0.885, 1, "88.5%"),
        (1.0, 1, "100.0%"),
        (0.0, 0, "0%"),
        (2 / 3, 0, "67%"),
        (1 / 6, 1, "16.7%"),
    ],
)
def test_fmt_percent(value, digits, expected):
    assert fmt_percent(value, digits) == expected


def test_percent_rounds_like_the_hundredfold_number():
    # The comparison pages printed f"{100 * v:.1f}%", the report f"{v:.1%}": the same digits.
    for i in range(10001):
        v = i / 10000
        assert fmt_percent(v) == f"{100 * v:.1f}%"


def test_missing_values_are_a_dash_never_nan():
    assert fmt_number(None) == "—"
    assert fmt_percent(None) == "—"
    assert fmt_value(None, "{:.1f}", undefined="n/a") == "n/a"
    assert fmt_number(None, undefined=DASH) == "—"
    assert fmt_value(3.14159, "{:.1f}") == "3.1"


def test_fmt_stat():
    assert fmt_stat({"value": 0.593}) == "0.593"
    assert fmt_stat({"value": 0.8467}, percent=True) == "84.7%"
    assert fmt_stat({"value": 1.23456}, digits=2) == "1.23"
    assert fmt_stat({"value": 0.5}, percent=True, digits=0) == "50%"
    assert fmt_stat(None) == "— no value"
    missing = fmt_stat({"value": None, "undefined": "only one annotator"})
    assert isinstance(missing, Missing) and missing.reason == "only one annotator"
    assert missing == "— only one annotator"
    # on a page: a dash, and the reason in small type, escaped
    assert missing.__html__() == '— <small class="missing">only one annotator</small>'
    assert Missing("<b>").__html__() == '— <small class="missing">&lt;b&gt;</small>'
    assert Missing().__html__() == "—"
    stat = {"value": None, "undefined": "only one annotator"}
    assert fmt_stat(stat, undefined=UNDEFINED_WITH_REASON) == "— only one annotator"
    assert fmt_stat({}, undefined="undefined ({reason})") == "undefined (no value)"
    assert stat_value({"value": 0.0}) == 0.0 and stat_value(None) is None


def test_fmt_interval():
    stat = {"value": 0.5, "ci": {"confidence": 0.95, "low": 0.3, "high": 0.7}}
    assert fmt_interval(stat) == "95% CI 0.300 – 0.700"
    assert fmt_interval(stat, 2) == "95% CI 0.30 – 0.70"
    assert fmt_interval({"value": 0.5, "ci": {"low": None, "undefined": "n < 2"}}) is None
    assert fmt_interval({"value": 0.5}) is None and fmt_interval(None) is None


def render(text: str, **context) -> str:
    return Template("{% load core_format %}" + text).render(Context(context))


def test_template_filters():
    assert render("{{ v|percent }}", v=0.8467) == "84.7%"
    assert render("{{ v|percent:0 }}", v=2 / 3) == "67%"
    assert render("{{ v|number }}", v=0.5934) == "0.593"
    assert render("{{ v|number:1 }}", v="2.25") == "2.2"
    assert render("{{ v|percent }}|{{ w|number }}|{{ x|number }}", v=None, w="", x="abc") == (
        "—|—|—"
    )


def test_formatting_has_no_django_imports():
    import core.formatting

    assert django_imports(core.formatting) == {}


def test_a_count_and_its_noun_singular_or_plural():
    from core.formatting import fmt_count

    assert fmt_count(1, "page") == "1 page"
    assert [fmt_count(n, "item") for n in (0, 2, 1200)] == ["0 items", "2 items", "1,200 items"]
    assert fmt_count(2, "match", "matches") == "2 matches"
