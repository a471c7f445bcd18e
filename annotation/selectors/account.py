"""A signed-in account's studies for the home page: the studies it takes part in (one
participant per study and account) and the open studies that take accounts, each with its
study link — the link that continues as the account's participant, or joins."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Participant, Study
from core.dashboard import Card

_STAGE_NOTES = {
    Participant.Stage.CONSENT: "consent next",
    Participant.Stage.TRAINING: "codebook next",
    Participant.Stage.QUALIFICATION: "qualification under way",
    Participant.Stage.WORKING: "labelling under way",
    Participant.Stage.DONE: "finished",
    Participant.Stage.SCREENED_OUT: "ended after the qualification",
    Participant.Stage.DECLINED: "consent declined",
}


def account_studies(*, user) -> list[tuple[str, str, str]]:
    """(study name, study link, where the account stands) for each study the account takes
    part in, then each open study taking accounts that it has not joined yet."""
    if not user.is_authenticated:
        return []
    rows = []
    joined = set()
    mine = Participant.objects.filter(user=user).select_related("study").order_by("-created_at")
    for participant in mine:
        study = participant.study
        joined.add(study.pk)
        note = _STAGE_NOTES.get(participant.stage, participant.get_stage_display().lower())
        if study.status != Study.Status.OPEN and participant.stage not in (
            Participant.Stage.DONE,
            Participant.Stage.SCREENED_OUT,
            Participant.Stage.DECLINED,
        ):
            note = f"{note}; the study is {study.get_status_display().lower()}"
        rows.append((study.name, reverse("annotation:enter", args=[study.slug]), note))
    open_studies = (
        Study.objects.filter(
            status=Study.Status.OPEN, entry__in=[Study.Entry.ACCOUNT, Study.Entry.BOTH]
        )
        .exclude(pk__in=joined)
        .order_by("name")
        .only("name", "slug")
    )
    for study in open_studies:
        rows.append((study.name, reverse("annotation:enter", args=[study.slug]), "not joined yet"))
    return rows


def studies_card(*, user) -> Card | None:
    """The home page's "your studies" card (settings.HOME_DASHBOARD), for a signed-in account."""
    if not user.is_authenticated:
        return None
    card = Card(
        key="studies",
        title="Your studies",
        blurb="Each study's link continues where you left off (one participant per study for "
        "your account), or lets you join.",
    )
    card.items = account_studies(user=user)
    if not card.items:
        card.empty_reason = "no open study takes accounts right now"
    return card
