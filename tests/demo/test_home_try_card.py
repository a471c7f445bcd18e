"""The home page's "try it as a participant" card for an annotator account: join, continue
while labelling, and once finished nothing to continue (where it ended instead)."""

from __future__ import annotations

import html

import pytest

from annotation.models import Participant, Study
from demo.management.commands.load_demo import DEMO_STUDY
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_study(db):
    study = make_study(n_items=2, entry="both", items_per_participant=2)
    Study.objects.filter(pk=study.pk).update(name=DEMO_STUDY)
    return study


def _home(client) -> str:
    return html.unescape(client.get("/").content.decode())


@pytest.mark.parametrize(
    ("stage", "label"),
    [
        (None, "Join the demo study as a participant"),
        ("working", "Continue the demo study"),
        ("done", "See your completion page"),
        ("screened_out", "See how it ended"),
    ],
)
def test_the_card_offers_what_is_left_to_do(demo_study, client, make_user, stage, label):
    user = make_user("ann", role="annotator")
    if stage:
        Participant.objects.create(study=demo_study, user=user, stage=stage)
    client.force_login(user)
    page = _home(client)
    assert label in page
    if stage in ("done", "screened_out"):
        assert "Continue the demo study" not in page
        assert f"You have taken part in “{DEMO_STUDY}”. Thank you." in page
