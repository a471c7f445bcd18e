"""A study with a target interval over a judged population, its participants labelling it
through the real services, and the local Prolific server."""

from __future__ import annotations

import pytest

from annotation.models import Participant, ProlificStudy, Study, StudyItem
from annotation.services.assignment import participant_current_assignment
from annotation.services.study import EntryRefused
from annotation.services.submission import annotation_submit
from tests.annotation.factories import (
    full_label,
    make_annotation,
    make_generations,
    make_study,
    working_participant,
)
from tests.judging.factories import judged_run, make_judge
from tests.support.prolific_server import ProlificTestServer

TOKEN = "tok-stop"


def judge_says_failure(position: int) -> bool:
    return position % 3 == 0


def people_say_failure(position: int) -> bool:
    """People agree with the judge except on every fifth item: the correction has work to do,
    so the interval narrows as labels arrive."""
    judge = judge_says_failure(position)
    return (not judge) if position % 5 == 2 else judge


def make_target_study(
    *,
    n_items: int = 150,
    n_more: int = 250,
    target: float | None = 0.08,
    design: bool = True,
    prolific_study_id: str = "",
    items_per_participant: int | None = None,
) -> Study:
    """A study of ``n_items`` items drawn from a population of ``n_items + n_more`` generations
    that a judge scored (its ``design``), each item labelled once (k = 1), with ``target``."""
    study = make_study(
        n_items=n_items,
        overlap=1,
        items_per_participant=items_per_participant or n_items,
        attention_rate=0,
        prolific_study_id=prolific_study_id,
    )
    items = list(
        study.items.filter(kind="regular").select_related("generation").order_by("position")
    )
    population = [i.generation for i in items] + make_generations(n_more, prefix="unlabelled")
    judge = make_judge(name=f"stop-judge-{study.pk}")
    judged_run(judge, population, [judge_says_failure(i) for i in range(len(population))])
    study.people = {i.generation_id: people_say_failure(n) for n, i in enumerate(items)}
    if design:
        study.design = {
            "judge": judge.pk,
            "population": [g.pk for g in population],
            "sampling": "uniform",
            "mix": 0.2,
            "seed": 0,
            "plan": {},
            "label_set": None,
        }
    study.target_half_width = target
    study.save(update_fields=["design", "target_half_width"])
    return study


def label_many(study: Study, n: int) -> None:
    """The first ``n`` unlabelled items labelled as people would, written straight as rows
    (one participant each, the items taken): the labels before the ones a test watches."""
    items = list(study.items.filter(kind="regular", n_assigned=0).order_by("position")[:n])
    assert len(items) == n, f"only {len(items)} items left to label"
    for item in items:
        make_annotation(
            item=item, annotator=f"row-{item.pk}", has_failure=study.people[item.generation_id]
        )
    StudyItem.objects.filter(pk__in=[i.pk for i in items]).update(n_assigned=1)


def label_next(study: Study, pid: str) -> bool:
    """Participant ``pid`` (entering on first use) labels the item handed out next, as people
    would (:attr:`people`); False when no item is handed out (or the study refuses entry)."""
    participant = Participant.objects.filter(study=study, prolific_pid=pid).first()
    if participant is None:
        try:
            participant = working_participant(study, pid, session=f"S-{pid}")
        except EntryRefused:
            return False
    assignment = participant_current_assignment(participant=participant)
    if assignment is None:
        return False
    has_failure = study.people[assignment.item.generation_id]
    annotation_submit(assignment=assignment, label=full_label(has_failure=has_failure))
    return True


@pytest.fixture
def prolific_server(settings, monkeypatch):
    with ProlificTestServer(token=TOKEN) as server:
        settings.PROLIFIC_API_BASE_URL = server.base_url
        monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
        yield server


def on_prolific(server: ProlificTestServer, study: Study, prolific_id: str = "PS1") -> None:
    """``study`` published on the local Prolific server and live (ACTIVE)."""
    server.studies[prolific_id] = {
        "id": prolific_id,
        "status": "ACTIVE",
        "total_available_places": 40,
        "places_taken": 0,
    }
    study.prolific_study_id = prolific_id
    study.save(update_fields=["prolific_study_id"])
    ProlificStudy.objects.create(
        study=study, prolific_id=prolific_id, status="ACTIVE", total_places=40
    )


@pytest.fixture
def admin(make_user):
    return make_user("stop-admin", role="admin")


@pytest.fixture
def researcher(make_user):
    return make_user("stop-researcher", role="researcher")
