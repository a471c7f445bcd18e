"""What one human label costs under a study's pay terms. Pure: no Django.

A plan's human label is an item's label: the majority of the study's ``overlap`` annotators.
Each of them is paid the reward per submission shared over its ``items_per_participant``
items, plus the bonus per item; the platform takes its fee (``PROLIFIC_FEE_RATE``) on rewards
and bonuses (:func:`annotation.money.cost_preview`'s rule):

    cost per item = overlap × (reward / items_per_participant + bonus_per_item) × (1 + fee_rate)
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def human_label_cost(
    *,
    reward: Decimal,
    items_per_participant: int,
    bonus_per_item: Decimal,
    overlap: int,
    fee_rate: Decimal,
) -> float:
    per_annotation = Decimal(reward) / max(1, items_per_participant) + Decimal(bonus_per_item)
    return float(overlap * per_annotation * (1 + Decimal(fee_rate)))


def cost_words(
    *, reward, items_per_participant, bonus_per_item, overlap, fee_rate, currency: str
) -> str:
    """The rule with the study's numbers, for the plan to say where its cost comes from."""
    cost = human_label_cost(reward=reward, items_per_participant=items_per_participant,
                            bonus_per_item=bonus_per_item, overlap=overlap, fee_rate=fee_rate)  # fmt: skip
    return (
        f"A human label costs {cost:,.4f} {currency}: {overlap} annotator(s) per item × "
        f"({reward} reward / {items_per_participant} items + {bonus_per_item} bonus per item) × "
        f"(1 + fee {fee_rate})."
    )


def reward_for_cost(
    *, cost: float, items_per_participant: int, overlap: int, fee_rate: Decimal
) -> Decimal | None:
    """The reward per submission (no bonus) at which one human label costs ``cost`` under
    :func:`human_label_cost`'s rule, to the hundredth (half up); ``None`` below 0.01."""
    per = max(1, items_per_participant)
    reward = Decimal(str(cost)) * per / (max(1, overlap) * (1 + Decimal(fee_rate)))
    reward = reward.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return reward if reward > 0 else None
