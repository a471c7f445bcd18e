"""A plan from a stored label set: its pilot (people's majority and the judge's verdict on the
items both labelled, the count of judge-only items) through :func:`plan_from_pilot`."""

from __future__ import annotations

from typing import Any

from validation.label_sets.adapters import ALL_GROUPS, judge_names, ppi_inputs
from validation.label_sets.reads import parsed
from validation.models import LabelSet
from validation.ppi_plan.stats import plan_from_pilot


def label_set_judges(label_set: LabelSet) -> list[str]:
    return judge_names(parsed(label_set))


def label_set_plan(
    label_set: LabelSet, *, judge: str, cost_human: float, cost_judge: float, target: str,
    value: float,
) -> dict[str, Any]:  # fmt: skip
    """The plan for ``judge`` on the whole label set; raises ``LabelSetError`` (labels that are
    not 0/1, an unknown judge) or ``PlanError``."""
    rows = ppi_inputs(parsed(label_set), judge=judge)[ALL_GROUPS]
    return plan_from_pilot(
        human=rows["human"], judge=rows["judge"], unlabelled=len(rows["unlabelled"]),
        cost_human=cost_human, cost_judge=cost_judge, target=target, value=value,
    )  # fmt: skip
