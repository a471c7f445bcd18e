"""Per-topic budgets of a mining batch, as the reference's mining config names them
(``targets.candidates_per_topic``, ``targets.desired_valid_per_topic``). Pure Python, no Django.

- ``candidates_per_topic``: at most this many documents of a topic go through the stages (the
  reference's budget: documents sent to extraction); the rest of the topic is not mined.
- ``desired_valid_per_topic``: once this many of a topic's documents passed every selected
  stage (kept), its remaining documents are not mined.

A chunk never takes more documents of a topic than the topic has left under either budget (a
document yields at most one candidate and one valid procedure), so neither is overshot.
Documents without a topic (``require_topic`` off) share one budget, as the reference's
no-topics mode does. The counts are always counted from the batch's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BUDGET_KEYS = ("candidates_per_topic", "desired_valid_per_topic")
BUDGET_STAGE = "budget"  # stage_reached of a document its topic's budget left unmined


@dataclass(frozen=True)
class Budgets:
    candidates_per_topic: int | None = None
    desired_valid_per_topic: int | None = None

    @property
    def active(self) -> bool:
        return self.candidates_per_topic is not None or self.desired_valid_per_topic is not None

    def allowance(self, *, candidates: int, valid: int) -> int | None:
        """How many more documents of a topic may enter the stages (None: no limit; 0: none)."""
        left: list[int] = []
        if self.candidates_per_topic is not None:
            left.append(self.candidates_per_topic - candidates)
        if self.desired_valid_per_topic is not None:
            left.append(self.desired_valid_per_topic - valid)
        return max(min(left), 0) if left else None

    def closed_reason(self, *, candidates: int, valid: int) -> str:
        """Why a topic takes no more documents ('' while it does)."""
        if self.desired_valid_per_topic is not None and valid >= self.desired_valid_per_topic:
            return (
                f"desired_valid_per_topic reached ({valid} valid of {self.desired_valid_per_topic})"
            )
        if self.candidates_per_topic is not None and candidates >= self.candidates_per_topic:
            return f"candidates_per_topic spent ({candidates} of {self.candidates_per_topic})"
        return ""


def clean_budget(key: str, value: Any) -> int | None:
    """One budget option checked: None/'' (no budget) or an integer >= 1; ``ValueError`` names it."""
    if value in (None, ""):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{key} must be an integer >= 1, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be an integer >= 1, got {value!r}") from None
    if number < 1 or (isinstance(value, float) and number != value):
        raise ValueError(f"{key} must be an integer >= 1, got {value!r}")
    return number


def budgets_of(options: dict[str, Any]) -> Budgets:
    return Budgets(**{key: options.get(key) for key in BUDGET_KEYS})


def plan_chunk(
    budgets: Budgets, counts: dict[str, dict[str, int]], size: int
) -> tuple[dict[str, int], dict[str, str]]:
    """For each topic with pending documents: how many may enter this chunk (``take``), or why
    none may ever again (``closed``). ``counts``: topic -> {pending, candidates, valid}."""
    take: dict[str, int] = {}
    closed: dict[str, str] = {}
    for topic, c in sorted(counts.items()):
        if not c.get("pending"):
            continue
        allowed = budgets.allowance(candidates=c["candidates"], valid=c["valid"])
        if allowed == 0:
            closed[topic] = budgets.closed_reason(candidates=c["candidates"], valid=c["valid"])
        else:
            take[topic] = min(size, c["pending"], allowed if allowed is not None else size)
    return take, closed
