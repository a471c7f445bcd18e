"""Money in one unit (pure): an amount is typed in the study's currency with exactly two
decimals, anything that could be read two ways is refused with what to write instead, and one
function converts to Prolific's integer minor unit without rounding."""

from __future__ import annotations

from decimal import Decimal

import pytest

from annotation import money


@pytest.mark.parametrize(
    "typed,value", [("1.50", "1.50"), (" 0.05 ", "0.05"), ("150.00", "150.00")]
)
def test_two_decimals_are_read_as_typed(typed, value):
    assert money.parse_amount(typed, currency="GBP") == Decimal(value)


def test_a_whole_number_is_refused_with_both_readings_named():
    with pytest.raises(money.AmountError) as refused:
        money.parse_amount("150", currency="GBP")
    assert str(refused.value) == (
        "150 has no decimals, so it could be read two ways: write 150.00 for 150 GBP, "
        "or 1.50 for 150 pence."
    )


@pytest.mark.parametrize("typed", ["1.5", "1,50", "£1.50", "1.505", "1e2", "-1.50", "NaN", "1 .50"])
def test_anything_but_digits_a_dot_and_two_decimals_is_refused(typed):
    with pytest.raises(money.AmountError, match="two decimals"):
        money.parse_amount(typed, currency="USD")


def test_zero_empty_and_too_much():
    with pytest.raises(money.AmountError, match=r"more than 0\.00 GBP"):
        money.parse_amount("0.00", currency="GBP")
    assert money.parse_amount("0.00", currency="GBP", allow_zero=True) == Decimal("0")
    with pytest.raises(money.AmountError, match="Give an amount in EUR"):
        money.parse_amount("  ", currency="EUR")
    with pytest.raises(money.AmountError, match=r"at most 9999\.99 GBP"):
        money.parse_amount("10000.00", currency="GBP")


def test_one_conversion_to_minor_units_never_rounds():
    assert money.minor_units(Decimal("1.50")) == 150
    assert money.minor_units(Decimal("150.00")) == 15000
    assert money.minor_units(Decimal("0.01")) == 1
    for bad in (Decimal("0.015"), Decimal("NaN"), Decimal("Infinity")):
        with pytest.raises(money.AmountError):
            money.minor_units(bad)


def test_the_help_text_states_the_rule():
    assert money.amount_help("GBP") == (
        "In GBP with exactly two decimals: 1.50 is one GBP and 50 pence; a whole amount is "
        "written 2.00."
    )


def test_cost_preview_rewards_fee_and_bonuses():
    p = money.cost_preview(
        reward=Decimal("1.50"), places=20, fee_rate=Decimal("0.333"), bonuses_paid=Decimal("4.50")
    )
    assert (p.rewards, p.bonuses_paid) == (Decimal("30.00"), Decimal("4.50"))
    assert p.fees == Decimal("11.49")  # 34.50 x 0.333 = 11.4885
    assert p.total == Decimal("45.99")
    assert money.shown(p.total, "GBP") == "45.99 GBP"


def test_the_money_rules_are_pure():
    from tests.support.purity import django_imports

    assert django_imports(money) == {}
