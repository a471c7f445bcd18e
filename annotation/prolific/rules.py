"""Rules of a study's life on Prolific (pure functions, no Django): what creating a study
sends, what the pilot proposes, which submission statuses free a participant's items, and
which study transitions are allowed from which status.

Shapes as documented in Prolific's API reference (Studies → Create a draft study; The study
object): ``reward`` in the currency's minor unit (pence, cents: converted by
:func:`annotation.money.minor_units`, the one place that does), ``estimated_completion_time``
in minutes, ``completion_codes`` with ``code_type`` and ``actions``, ``filters`` by
``filter_id``; study transitions ``PUBLISH``, ``PAUSE``, ``START``, ``STOP``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

# Submission statuses that end a participant's place: Prolific counts a study's places taken as
# "submissions started excluding timed out and returned submissions" (API reference, Studies,
# ``places_taken``), so a REJECTED submission keeps its place and frees nothing here either.
FREEING = frozenset({"RETURNED", "TIMED-OUT"})
# Statuses recorded on the participant without freeing anything.
RECORDED = frozenset(
    {"ACTIVE", "AWAITING REVIEW", "APPROVED", "PARTIALLY APPROVED", "REJECTED", "SCREENED OUT"}
)
SUBMISSION_STATUSES = FREEING | RECORDED

STUDY_STATUSES = (
    "UNPUBLISHED",
    "SCHEDULED",
    "PUBLISHING",
    "ACTIVE",
    "PAUSED",
    "AWAITING REVIEW",
    "COMPLETED",
)
# transition → the statuses it may be asked from
TRANSITIONS = {
    "PUBLISH": ("UNPUBLISHED",),
    "PAUSE": ("ACTIVE",),
    "START": ("PAUSED",),
    "STOP": ("ACTIVE", "PAUSED"),
}
DEVICES = ("desktop", "tablet", "mobile")
# Prolific filter ids for participant groups and earlier studies
ALLOW_GROUP, BLOCK_GROUP, PREVIOUS_STUDIES = (
    "participant_group_allowlist",
    "participant_group_blocklist",
    "previous_studies",
)


@dataclass(frozen=True)
class Codes:
    completed: str
    screened_out: str
    failed_attention: str


def completion_codes(codes: Codes, *, exclusion_group: str = "") -> list[dict]:
    """The three codes the app gives participants, each with its action: every submission is
    reviewed here before approval; a failed attention check also joins the exclusion group
    (when the study has one), so later studies keep the participant out."""
    attention = [{"action": "MANUALLY_REVIEW"}]
    if exclusion_group:
        attention.append(
            {"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": exclusion_group}
        )
    return [
        {
            "code": codes.completed,
            "code_type": "COMPLETED",
            "actions": [{"action": "MANUALLY_REVIEW"}],
        },
        {
            "code": codes.screened_out,
            "code_type": "OTHER",
            "actions": [{"action": "MANUALLY_REVIEW"}],
        },
        {
            "code": codes.failed_attention,
            "code_type": "FAILED_ATTENTION_CHECK",
            "actions": attention,
        },
    ]


def entry_url(study_url: str) -> str:
    """The study's entry URL with Prolific's three placeholders."""
    sep = "&" if "?" in study_url else "?"
    return (
        f"{study_url}{sep}PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )


def filters(*, allow_groups=(), block_groups=(), previous_studies=()) -> list[dict]:
    out = []
    for filter_id, values in (
        (ALLOW_GROUP, allow_groups),
        (BLOCK_GROUP, block_groups),
        (PREVIOUS_STUDIES, previous_studies),
    ):
        values = sorted({v for v in values if v})
        if values:
            out.append({"filter_id": filter_id, "selected_values": values})
    return out


@dataclass(frozen=True)
class PilotProposal:
    median_seconds: float
    minutes: int
    reward: Decimal
    hourly: Decimal


def places_needed(*, n_items: int, overlap: int, items_per_participant: int) -> int:
    """The places that give every one of ``n_items`` regular items its ``overlap`` annotators,
    each participant labelling ``items_per_participant`` of them: ⌈n × overlap / per⌉, at
    least 1."""
    return max(1, math.ceil(n_items * overlap / max(1, items_per_participant)))


def pilot_proposal(
    *, median_seconds: float, floor: Decimal | None, reward: Decimal
) -> PilotProposal:
    """From the pilot's median active time: the estimated time (whole minutes, rounded up)
    and the reward that pays at least the hourly floor at that time (never less than the
    current reward; rounded up to the cent)."""
    minutes = max(1, math.ceil(median_seconds / 60))
    needed = Decimal(0)
    if floor is not None:
        needed = (Decimal(floor) * minutes / 60).quantize(Decimal("0.01"), rounding=ROUND_CEILING)
    proposed = max(Decimal(reward), needed)
    hourly = (proposed * 60 / minutes).quantize(Decimal("0.01"))
    return PilotProposal(
        median_seconds=median_seconds, minutes=minutes, reward=proposed, hourly=hourly
    )


def transition_allowed(action: str, status: str) -> bool:
    return status in TRANSITIONS.get(action, ())
