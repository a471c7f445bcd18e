"""Reads for a study's life on Prolific: the values a new Prolific study is prefilled with
(from the study, its pay terms and its earlier rounds), the pilot's proposal, and the app's
own counts beside Prolific's."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, Sum

from annotation import conf, money
from annotation.models import (
    Assignment,
    Participant,
    ProlificCall,
    ProlificStudy,
    ProlificSubmission,
    Study,
    StudyItem,
    StudyRound,
)
from annotation.prolific import rules
from annotation.selectors.quality import pay_floor, pay_rows, study_pay


@dataclass
class Draft:
    name: str
    description: str
    reward: Decimal | None  # None: not given yet (never a prefilled 0)
    minutes: int
    places: int
    devices: list[str] = field(default_factory=lambda: ["desktop"])
    allow_groups: list[str] = field(default_factory=list)
    block_groups: list[str] = field(default_factory=list)
    previous_studies: list[str] = field(default_factory=list)
    currency: str = "GBP"


def prolific_state(study: Study) -> ProlificStudy | None:
    return ProlificStudy.objects.filter(study=study).first()


def earlier_prolific_ids(study: Study) -> list[str]:
    """The Prolific study ids of this study's earlier rounds, nearest first."""
    out, seen = [], {study.pk}
    info = StudyRound.objects.filter(study=study).select_related("previous").first()
    while info is not None and info.previous_id not in seen:
        seen.add(info.previous_id)
        if info.previous.prolific_study_id:
            out.append(info.previous.prolific_study_id)
        info = StudyRound.objects.filter(study=info.previous).select_related("previous").first()
    return out


def draft_defaults(*, study: Study) -> Draft:
    """Prefilled from the study (name, description), its pay terms (reward, time, exclusion
    group) and its earlier rounds; places: enough participants to give every regular item
    its k annotators."""
    terms = study_pay(study)
    n_items = StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).count()
    places = rules.places_needed(
        n_items=n_items, overlap=study.overlap, items_per_participant=study.items_per_participant
    )
    minutes = terms.estimated_minutes or max(
        1, math.ceil(study.items_per_participant * study.min_seconds_per_item / 60)
    )
    return Draft(
        name=study.name[:120],
        description=study.description[:2000]
        or f"Label {study.items_per_participant} procedures for critical failures.",
        reward=terms.reward or None,
        minutes=minutes,
        places=places,
        block_groups=[terms.exclusion_group_id] if terms.exclusion_group_id else [],
        previous_studies=earlier_prolific_ids(study),
        currency=terms.currency,
    )


def pilot_proposal(*, study: Study) -> rules.PilotProposal | None:
    """The estimated time and reward the pilot suggests (None before anyone's active time)."""
    summary = pay_rows(study=study)["summary"]
    if not summary.median_seconds:
        return None
    return rules.pilot_proposal(
        median_seconds=summary.median_seconds, floor=pay_floor(), reward=study_pay(study).reward
    )


def prolific_reward(state: ProlificStudy) -> Decimal | None:
    """The reward the Prolific study pays now: the one confirmed after the pilot (kept in the
    pay terms), else the one it was created with, as typed (two decimals)."""
    if state.pilot_confirmed_at:
        return study_pay(state.study).reward or None
    typed = ((state.registered or {}).get("draft") or {}).get("reward")
    try:
        return Decimal(typed) if typed not in (None, "", "None") else None
    except ArithmeticError:
        return None


def bonuses_paid(*, study: Study) -> Decimal:
    """Bonuses paid through the app for this study (the logged pay calls that worked)."""
    paid = ProlificCall.objects.filter(
        study=study, action=ProlificCall.Action.BONUS_PAY, ok=True
    ).aggregate(total=Sum("amount"))["total"]
    return paid or Decimal("0")


def cost_preview(*, study: Study, reward: Decimal, places: int) -> money.CostPreview:
    """What the study costs at most once ``places`` are filled at ``reward``: rewards,
    Prolific's fee at ``PROLIFIC_FEE_RATE``, bonuses paid so far."""
    return money.cost_preview(
        reward=reward,
        places=places,
        fee_rate=conf.prolific_fee_rate(),
        bonuses_paid=bonuses_paid(study=study),
    )


def cost_lines(preview: money.CostPreview, currency: str) -> list[str]:
    """The cost preview as the confirmation page says it, every amount in ``currency``."""
    rate = f"{preview.fee_rate * 100:.1f}".removesuffix(".0")
    lines = [
        f"Rewards: {preview.places} place{'s' if preview.places != 1 else ''} × "
        f"{money.shown(preview.reward, currency)} = {money.shown(preview.rewards, currency)}.",
        f"Bonuses paid so far: {money.shown(preview.bonuses_paid, currency)}.",
        f"Prolific's fee ({rate}% of rewards and bonuses, PROLIFIC_FEE_RATE): "
        f"{money.shown(preview.fees, currency)}.",
        f"At most {money.shown(preview.total, currency)} in all.",
    ]
    return lines


APP_COUNT_LABELS = {
    "working": "In progress here",
    "done": "Done here",
    "screened_out": "Screened out here",
    "returned": "Returned here",
    "active_items": "Items held now",
}


def app_counts(*, study: Study) -> dict[str, int]:
    stages = dict(
        Participant.objects.filter(study=study)
        .values_list("stage")
        .annotate(n=Count("id"))
        .values_list("stage", "n")
    )
    return {
        "working": sum(
            stages.get(s, 0) for s in ("consent", "training", "qualification", "working")
        ),
        "done": stages.get("done", 0),
        "screened_out": stages.get("screened_out", 0),
        "returned": stages.get("returned", 0),
        "active_items": Assignment.objects.filter(
            item__study=study, state=Assignment.State.ACTIVE
        ).count(),
    }


def submission_counts(*, study: Study) -> dict[str, int]:
    """Submissions by Prolific status as last seen here (webhooks or the poll)."""
    return dict(
        ProlificSubmission.objects.filter(study=study)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
        .order_by()
    )


def live_studies() -> list[ProlificStudy]:
    """Studies created from the app that Prolific may still change (the poll's list)."""
    return list(
        ProlificStudy.objects.exclude(status__in=("UNPUBLISHED", "COMPLETED")).select_related(
            "study"
        )
    )


def final_code(*, study: Study, participant: Participant) -> str:
    """The completion code a finished participant is sent back to Prolific with: completed,
    failed attention (a study created from the app registers its own code for it), or
    screened out."""
    if participant.stage == Participant.Stage.DONE:
        return study.completion_code
    failed_attention = (
        study.attention_screen_after
        and participant.attention_failures >= study.attention_screen_after
    )
    code = (
        ProlificStudy.objects.filter(study=study)
        .values_list("failed_attention_code", flat=True)
        .first()
        if failed_attention
        else None
    )
    return code or study.screened_out_code
