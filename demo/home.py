"""The home page's "try it as a participant" card (:mod:`core.dashboard`): a link into the running
demo study with a fresh Prolific-style identity, so any visitor can do what a participant does."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from django.urls import reverse

from annotation.models import Participant, Study
from core.dashboard import Card
from demo.management.commands.load_demo import DEMO_STUDY  # the running demo study


def try_card(*, user) -> Card | None:
    study = Study.objects.filter(name=DEMO_STUDY).only("slug", "status", "name", "entry").first()
    if study is None:
        return None
    card = Card(
        key="try",
        title="Try it as a participant",
        blurb=(
            f"“{study.name}” is running. Join it as a participant would from Prolific: consent, "
            "the codebook, then label items (20 s minimum per item in the demo)."
        ),
    )
    if study.status != Study.Status.OPEN:
        card.empty_reason = f"the demo study is {study.get_status_display().lower()}"
        return card
    card.link = reverse("annotation:enter", args=[study.slug])
    card.link_label = "Join the demo study as a participant"
    if user.is_authenticated and study.accepts_accounts:
        # the account's own participant, the same one its study link leads to
        stage = (
            Participant.objects.filter(study=study, user=user)
            .values_list("stage", flat=True)
            .first()
        )
        if stage in Participant.ENDED_STAGES:  # nothing to continue: where it ended
            card.blurb = f"You have taken part in “{study.name}”. Thank you."
            card.link_label = (
                "See your completion page"
                if stage == Participant.Stage.DONE
                else "See how it ended"
            )
        elif stage is not None:
            card.link_label = "Continue the demo study"
        return card
    params = {
        "PROLIFIC_PID": f"visitor-{secrets.token_hex(6)}",
        "STUDY_ID": "demo",
        "SESSION_ID": secrets.token_hex(6),
    }
    card.link += "?" + urlencode(params)
    return card
