"""Rounds: a new round copies the study, lists whom it carries over and excludes, and the rounds
page compares agreement across rounds (checked against the krippendorff package)."""

from __future__ import annotations

import html

import krippendorff
import numpy as np
import pytest
from django.urls import reverse

from annotation.models import Participant, Study, StudyPay, StudyRound
from annotation.selectors.rounds import round_chain, round_split, rounds_comparison
from tests.annotation.factories import REGULAR

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_more(quality_study):
    Participant.objects.create(study=quality_study, prolific_pid="PID_E", stage="screened_out")
    Participant.objects.create(
        study=quality_study, prolific_pid="PID_F", stage="working", qualification_score=0.5
    )
    return quality_study


def test_split_carries_qualified_and_excludes_rejected_or_screened_out(with_more):
    assert round_split(study=with_more) == (["PID_A", "PID_B", "PID_C"], ["PID_D", "PID_E"])


def test_next_round_copies_the_study(with_more, client, make_user):
    StudyPay.objects.create(study=with_more, reward="1.50", estimated_minutes=12)
    user = make_user("round-researcher", role="researcher")
    client.force_login(user)
    r = client.post(reverse("annotation:rounds", args=[with_more.pk]), {"name": "Round two"})
    new = Study.objects.get(name="Round two")
    assert r.status_code == 302 and r["Location"] == reverse("annotation:rounds", args=[new.pk])
    assert (new.overlap, new.min_seconds_per_item, new.prolific_study_id) == (4, 30, "")
    assert new.completion_code != with_more.completion_code and new.created_by == user

    def items(study):
        return sorted(
            study.items.values_list("generation_id", "kind", "expected_has_failure", "position")
        )

    assert items(new) == items(with_more)
    info = StudyRound.objects.get(study=new)
    assert (info.previous, info.number) == (with_more, 1)
    assert (info.carried_over, info.excluded) == (["PID_A", "PID_B", "PID_C"], ["PID_D", "PID_E"])
    assert StudyPay.objects.get(study=new).estimated_minutes == 12
    third = client.post(reverse("annotation:rounds", args=[new.pk]), {"name": ""})
    last = Study.objects.order_by("-id").first()
    assert third.status_code == 302 and last.name == "Round two · round 3"
    assert round_chain(study=new) == [with_more, new, last]
    page = html.unescape(client.get(reverse("annotation:rounds", args=[new.pk])).content.decode())
    assert "PID_A PID_B PID_C" in page and "PID_D PID_E" in page
    assert "Add excluded participants" not in page  # groups are for admins


def test_agreement_across_rounds(with_more, make_user):
    from annotation.services.rounds import round_create

    new = round_create(study=with_more, user=make_user("r2", role="researcher"))
    rows = rounds_comparison(study=new, enqueue=_no_worker)
    assert [r["study"] for r in rows] == [with_more, new]
    names = ["A", "B", "C", "D"]
    data = np.array(
        [
            [float(REGULAR[i][n]) if n in REGULAR[i] else np.nan for i in sorted(REGULAR)]
            for n in names
        ]
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert rows[0]["alpha"] == pytest.approx(expected)
    assert (rows[0]["n_annotators"], rows[0]["n_items"]) == (4, 6)
    assert rows[1]["alpha"] is None and (rows[1]["carried_over"], rows[1]["excluded"]) == (3, 2)


def test_annotators_cannot_create_rounds(with_more, client, make_user):
    client.force_login(make_user("round-annotator", role="annotator"))
    assert client.post(reverse("annotation:rounds", args=[with_more.pk])).status_code == 403
    assert not StudyRound.objects.exists()


def test_carried_over_participants_skip_the_qualification_of_the_next_round(with_more, make_user):
    from annotation.models import StudyItem
    from annotation.services.flow import participant_finish_training
    from annotation.services.rounds import round_create

    new = round_create(study=with_more, user=make_user("r3", role="researcher"))
    any_item = new.items.filter(kind="regular").first()
    StudyItem.objects.create(
        study=new,
        generation_id=any_item.generation_id,
        kind="qualification",
        position=0,
        expected_has_failure=True,
    )
    stages = {}
    for pid in ("PID_A", "PID_D", "PID_NEW", ""):
        user = None if pid else make_user("account-annotator", role="annotator")
        p = Participant.objects.create(study=new, prolific_pid=pid, user=user, stage="training")
        stages[pid] = participant_finish_training(participant=p).stage
    # PID_A qualified in round 1 and is carried over; the others take the qualification
    # (PID_D was excluded: entry refuses them, and were they let in they would not skip it)
    assert stages == {
        "PID_A": "working",
        "PID_D": "qualification",
        "PID_NEW": "qualification",
        "": "qualification",
    }
    assert Participant.objects.get(study=new, prolific_pid="PID_A").qualification_score is None


def _no_worker(study_id: int) -> None:  # small studies: computed in the request
    raise AssertionError(f"study {study_id}: a small study's report was sent to a worker")
