"""Money in one unit (pure functions, no Django).

Every amount a person types or reads is in the study's currency with exactly two decimals
(``1.50`` GBP is one pound fifty). The rule cannot be misread: ``150`` is refused at its field
(is it 150.00 or 1.50?), and so are ``1.5``, ``1,50`` and ``£1.50``. Prolific's API takes a
study's reward as an integer in the currency's minor unit (pence, cents); :func:`minor_units`
is the one place that converts, and it never rounds. The cost a study is about to commit is
:func:`cost_preview`: rewards × places, Prolific's fee at the configured rate, and the bonuses
already paid."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

HUNDREDTH = Decimal("0.01")
MAX_AMOUNT = Decimal("9999.99")  # one reward or one bonus, in the study's currency
_TWO_DECIMALS = re.compile(r"\d{1,7}\.\d{2}")
_WHOLE = re.compile(r"\d{1,7}")
MINOR_UNIT_NAMES = {"GBP": "pence", "USD": "cents", "EUR": "cents"}


class AmountError(ValueError):
    """An amount refused at its field; the message says what to write instead."""


def minor_unit_name(currency: str) -> str:
    return MINOR_UNIT_NAMES.get((currency or "").upper(), "minor units")


def amount_help(currency: str) -> str:
    """The help text of every amount field: the one rule, in the person's words."""
    return (
        f"In {currency} with exactly two decimals: 1.50 is one {currency} and 50 "
        f"{minor_unit_name(currency)}; a whole amount is written 2.00."
    )


def parse_amount(raw: str, *, currency: str, allow_zero: bool = False) -> Decimal:
    """The typed amount as a ``Decimal`` with two places, or :class:`AmountError` saying why
    not. ``allow_zero``: 0.00 is a valid value (a bonus rule that pays nothing)."""
    text = (raw or "").strip()
    example = "0.00 or 1.50" if allow_zero else "1.50"
    if not text:
        raise AmountError(f"Give an amount in {currency} with two decimals, e.g. {example}.")
    if _WHOLE.fullmatch(text):
        as_minor = Decimal(int(text)) / 100
        raise AmountError(
            f"{text} has no decimals, so it could be read two ways: write {int(text)}.00 for "
            f"{int(text)} {currency}, or {as_minor:.2f} for {int(text)} {minor_unit_name(currency)}."
        )
    if not _TWO_DECIMALS.fullmatch(text):
        raise AmountError(
            f"{text[:20]!r} is not an amount in {currency} with two decimals: write digits, a dot "
            f"and two decimals, e.g. {example} (no currency sign, no thousands separator)."
        )
    value = Decimal(text)
    if value > MAX_AMOUNT:
        raise AmountError(f"{text} is too much: at most {MAX_AMOUNT} {currency}.")
    if value == 0 and not allow_zero:
        raise AmountError(f"The amount must be more than 0.00 {currency}.")
    return value


def minor_units(amount: Decimal) -> int:
    """The one conversion: an amount in the study's currency (at most two decimals) as the
    integer minor unit Prolific's API takes (``1.50`` → ``150``). Refuses, never rounds, an
    amount that is not a whole number of minor units or is not finite."""
    value = Decimal(amount)
    if not value.is_finite() or value != value.quantize(HUNDREDTH):
        raise AmountError(f"{amount} is not an amount with two decimals.")
    return int(value * 100)


def shown(amount: Decimal | None, currency: str = "") -> str:
    """An amount as a person reads it: two decimals, then the currency (``1.50 GBP``)."""
    if amount is None:
        return ""
    text = f"{Decimal(amount).quantize(HUNDREDTH, rounding=ROUND_HALF_UP)}"
    return f"{text} {currency}".strip()


@dataclass(frozen=True)
class CostPreview:
    reward: Decimal
    places: int
    rewards: Decimal  # reward × places
    fee_rate: Decimal
    fees: Decimal  # Prolific's fee on the rewards and on the bonuses paid
    bonuses_paid: Decimal
    total: Decimal  # rewards + bonuses paid + fees


def cost_preview(
    *, reward: Decimal, places: int, fee_rate: Decimal, bonuses_paid: Decimal = Decimal(0)
) -> CostPreview:
    """What the study costs at most once these places are filled: every place paid the
    reward, Prolific's fee (``fee_rate``, e.g. 0.333) on the rewards and on the bonuses
    already paid, rounded half-up to the hundredth."""
    rewards = (Decimal(reward) * places).quantize(HUNDREDTH)
    bonuses = Decimal(bonuses_paid).quantize(HUNDREDTH)
    fees = ((rewards + bonuses) * Decimal(fee_rate)).quantize(HUNDREDTH, rounding=ROUND_HALF_UP)
    return CostPreview(
        reward=Decimal(reward).quantize(HUNDREDTH),
        places=places,
        rewards=rewards,
        fee_rate=Decimal(fee_rate),
        fees=fees,
        bonuses_paid=bonuses,
        total=rewards + bonuses + fees,
    )
