"""A small study labelled through the real services, and clients for each role."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Participant
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import annotation_submit
from benchmarks.models import Topic
from tests.annotation.factories import full_label, make_study, working_participant

# item position -> {annotator: first failing L2 step (failure) or None (no failure)}
NO = "no"
LABELS = {
    0: {"A": 2, "B": 2, "C": 2},
    1: {"A": NO, "B": NO, "C": NO},
    2: {"A": 1, "B": 3, "C": NO},
    3: {"A": NO, "B": NO, "C": 2},
    4: {"A": 1, "B": 1, "C": 2},
    5: {"A": NO, "B": 4, "C": NO},
}
ANNOTATORS = ("A", "B", "C")
TOPIC_ITEMS = (0, 1, 2)  # these items get the topic "Report topic"; the others have none


def label_for(position: int, annotator: str, labels: dict = LABELS):
    step = labels[position][annotator]
    if step == NO:
        return full_label(has_failure=False, comments=f"{annotator} says fine")
    return full_label(
        has_failure=True,
        failures=[
            {
                "description": f"{annotator}: step {step} is wrong",
                "l1_steps": [1],
                "l2_steps": [step],
            }
        ],
        comments=f"{annotator} found a failure",
    )


def label_study(study, labels: dict, annotators) -> dict[str, Participant]:
    """Each annotator enters, is served items by the real flow and submits the planned label."""
    out = {}
    for name in annotators:
        p = working_participant(study, name)
        while (a := participant_current_assignment(participant=p)) is not None:
            Assignment.objects.filter(pk=a.pk).update(
                served_at=timezone.now() - timedelta(seconds=60)
            )
            a.refresh_from_db()
            position = a.item.position
            assert position in labels, "the study served an item outside the plan"
            annotation_submit(
                assignment=a,
                label=label_for(position, name, labels),
                active_ms=1000 * (10 + position),
            )
            p.refresh_from_db()
        out[name] = p
    return out


@pytest.fixture
def labelled_study(db):
    study = make_study(n_items=6, overlap=3, items_per_participant=6, attention_rate=0.0)
    topic, _ = Topic.objects.get_or_create(slug="report-topic", defaults={"name": "Report topic"})
    for item in study.items.select_related("generation__procedure"):
        if item.position in TOPIC_ITEMS:
            item.generation.procedure.topic = topic
            item.generation.procedure.save(update_fields=["topic"])
    participants = label_study(study, LABELS, ANNOTATORS)
    study.participants_by_name = participants
    study.items_by_position = {i.position: i for i in study.items.filter(kind="regular")}
    return study


@pytest.fixture
def researcher_client(client, make_user):
    client.force_login(make_user("report-researcher", role="researcher"))
    return client


@pytest.fixture
def researcher_user(make_user):
    return make_user("report-adjudicator", role="researcher")
