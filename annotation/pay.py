"""Pay rules of a study (pure functions): effective hourly pay from measured active time, and
bonuses (per regular item, per correctly answered known item). Amounts are ``Decimal`` in the
study's currency, rounded half-up to the cent."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from statistics import median

from annotation.money import AmountError, parse_amount

CENT = Decimal("0.01")


def cents(value: Decimal) -> Decimal:
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def hourly(reward: Decimal, active_seconds: float) -> Decimal | None:
    """The reward per hour of measured active time; ``None`` without any active time."""
    if active_seconds <= 0:
        return None
    return cents(Decimal(reward) * Decimal(3600) / Decimal(str(active_seconds)))


@dataclass(frozen=True)
class HourlySummary:
    per_participant: dict[str, Decimal | None]
    median_seconds: float | None
    median_hourly: Decimal | None
    estimated_hourly: Decimal | None
    below_floor: list[str]  # participant labels paid below the floor per hour


def hourly_summary(
    *,
    reward: Decimal,
    estimated_minutes: int,
    active_seconds: dict[str, float],
    floor: Decimal | None,
) -> HourlySummary:
    """``active_seconds``: participant label → measured active seconds of the session. The
    median hourly pay is the reward over the median active time (not the median of rates)."""
    per = {label: hourly(reward, secs) for label, secs in active_seconds.items()}
    timed = [s for s in active_seconds.values() if s > 0]
    med = median(timed) if timed else None
    below = (
        sorted(label for label, rate in per.items() if rate is not None and rate < floor)
        if floor is not None
        else []
    )
    return HourlySummary(
        per_participant=per,
        median_seconds=med,
        median_hourly=hourly(reward, med) if med else None,
        estimated_hourly=hourly(reward, estimated_minutes * 60) if estimated_minutes else None,
        below_floor=below,
    )


def bonus(
    *, n_items: int, n_known_correct: int, per_item: Decimal, per_known_correct: Decimal
) -> Decimal:
    return cents(Decimal(n_items) * per_item + Decimal(n_known_correct) * per_known_correct)


def bonus_total(amounts: Iterable[Decimal]) -> Decimal:
    return cents(sum((Decimal(a) for a in amounts), Decimal("0")))


def parse_bonus_csv(text: str, *, currency: str = "GBP") -> list[tuple[str, Decimal]]:
    """``participant_id,amount`` lines (a header line ``participant_id,amount`` is allowed),
    each amount in the study's currency with two decimals (:func:`annotation.money.parse_amount`).
    Raises ``ValueError`` naming the line for a malformed line, a bad or non-positive amount,
    or a participant listed twice."""
    out: list[tuple[str, Decimal]] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or (number == 1 and line.lower().replace(" ", "") == "participant_id,amount"):
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2 or not parts[0]:
            raise ValueError(f"bonus CSV line {number}: expected 'participant_id,amount'")
        pid, raw_amount = parts
        try:
            amount = parse_amount(raw_amount, currency=currency)
        except AmountError as exc:
            raise ValueError(f"bonus CSV line {number}: {exc}") from None
        if pid in seen:
            raise ValueError(f"bonus CSV line {number}: participant {pid} is listed twice")
        seen.add(pid)
        out.append((pid, amount))
    if not out:
        raise ValueError("bonus CSV: no participant_id,amount lines")
    return out
