"""The annotator's hot reads, compiled once (core.prepared.PreparedRead), give what the ORM gives:
same rows, same values (JSON, datetimes, booleans), the same ownership rules, in one query."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, Draft, Participant
from annotation.selectors.annotator import assignment_for_cookie, participant_for_slug
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import annotation_submit
from tests.annotation.factories import make_study, working_participant

pytestmark = pytest.mark.django_db


def _field_values(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def test_participant_state_matches_the_orm_in_one_query():
    study = make_study(n_items=3)
    p = working_participant(study, "PID_STATE")
    with CaptureQueriesContext(connection) as q:
        got = participant_for_slug(slug=study.slug, participant_id=p.pk, with_assignment_state=True)
    assert len(q.captured_queries) == 1
    want = Participant.objects.select_related("study").get(pk=p.pk)
    assert _field_values(got) == _field_values(want)
    assert _field_values(got.study) == _field_values(want.study)
    assert got.open_assignment_id is None and got.has_expired is False

    a = participant_current_assignment(participant=got)
    got = participant_for_slug(slug=study.slug, participant_id=p.pk, with_assignment_state=True)
    assert got.open_assignment_id == a.pk and got.has_expired is False

    Assignment.objects.filter(pk=a.pk).update(state=Assignment.State.EXPIRED)
    got = participant_for_slug(slug=study.slug, participant_id=p.pk, with_assignment_state=True)
    assert got.open_assignment_id is None and got.has_expired is True


def test_participant_state_refuses_another_study_or_no_id():
    study, other = make_study(n_items=2), make_study(n_items=2)
    p = working_participant(study, "PID_X")
    assert (
        participant_for_slug(slug=other.slug, participant_id=p.pk, with_assignment_state=True)
        is None
    )
    assert participant_for_slug(slug=study.slug, participant_id=None) is None


def test_assignment_for_cookie_matches_the_orm_and_leaves_out_heavy_fields():
    study = make_study(n_items=3)
    p = working_participant(study, "PID_FULL")
    a = participant_current_assignment(participant=p)
    proc = a.item.generation.procedure
    proc.source_text = "mined page " * 400
    proc.save(update_fields=["source_text"])

    with CaptureQueriesContext(connection) as q:
        got = assignment_for_cookie(slug=study.slug, participant_id=p.pk, assignment_id=a.pk)
    assert len(q.captured_queries) == 1
    assert "source_text" not in q.captured_queries[0]["sql"]
    want = Assignment.objects.select_related(
        "participant__study", "item__generation__procedure"
    ).get(pk=a.pk)
    assert _field_values(got) == _field_values(want)
    assert got.served_at.tzinfo is not None and got.served_at == want.served_at
    assert _field_values(got.participant) == _field_values(want.participant)
    assert _field_values(got.participant.study) == _field_values(want.participant.study)
    assert _field_values(got.item) == _field_values(want.item)
    gen, want_gen = got.item.generation, want.item.generation
    assert gen.predicted_steps == want_gen.predicted_steps and isinstance(gen.predicted_steps, list)
    assert gen.procedure.steps == want_gen.procedure.steps
    assert gen.procedure.resources == want_gen.procedure.resources
    assert got.has_draft is False
    with CaptureQueriesContext(connection) as q:  # the left-out field still loads on demand
        assert got.item.generation.procedure.source_text == proc.source_text
    assert len(q.captured_queries) == 1

    Draft.objects.create(assignment=a, data={"choice": "none"}, updated_at=timezone.now())
    got = assignment_for_cookie(slug=study.slug, participant_id=p.pk, assignment_id=a.pk)
    assert got.has_draft is True


def test_assignment_for_cookie_is_only_the_owners():
    study, other_study = make_study(n_items=3), make_study(n_items=3)
    owner = working_participant(study, "PID_OWNER")
    intruder = working_participant(study, "PID_INTRUDER")
    a = participant_current_assignment(participant=owner)
    assert (
        assignment_for_cookie(slug=study.slug, participant_id=intruder.pk, assignment_id=a.pk)
        is None
    )
    assert (
        assignment_for_cookie(slug=other_study.slug, participant_id=owner.pk, assignment_id=a.pk)
        is None
    )
    assert assignment_for_cookie(slug=study.slug, participant_id=None, assignment_id=a.pk) is None


def test_submit_through_prepared_read_stores_once_and_clears_the_draft():
    study = make_study(n_items=2)
    p = working_participant(study, "PID_SUBMIT")
    a = participant_current_assignment(participant=p)
    Assignment.objects.filter(pk=a.pk).update(served_at=timezone.now() - timedelta(seconds=5))
    Draft.objects.create(assignment=a, data={"choice": "none"}, updated_at=timezone.now())
    loaded = assignment_for_cookie(slug=study.slug, participant_id=p.pk, assignment_id=a.pk)
    from tests.annotation.factories import full_label

    result = annotation_submit(assignment=loaded, label=full_label())
    assert result.created and not Draft.objects.filter(assignment=a).exists()
    assert Participant.objects.get(pk=p.pk).n_done == 1
    again = assignment_for_cookie(slug=study.slug, participant_id=p.pk, assignment_id=a.pk)
    assert annotation_submit(assignment=again, label=full_label()).created is False


def test_prepared_slot_update_never_passes_k_and_counts_rows():
    from annotation.models import StudyItem
    from annotation.services.assignment import item_take_slot

    study = make_study(n_items=1, overlap=2)
    item = StudyItem.objects.get(study=study)
    assert [item_take_slot(item_id=item.pk, overlap=2) for _ in range(3)] == [True, True, False]
    item.refresh_from_db()
    assert item.n_assigned == 2
    # no such item: nothing updated
    assert item_take_slot(item_id=item.pk + 10_000, overlap=2) is False


def test_a_sentinel_missing_from_the_sql_is_refused():
    from core.prepared import PreparedRead, registry

    read = PreparedRead(
        "tests.sentinel_missing",
        model=Participant,
        build=lambda *, pk: Participant.objects.filter(pk=pk + 1).values_list("pk"),
        sentinels={"pk": 2_073_000_099},
    )
    try:
        with pytest.raises(RuntimeError, match=r"parameters \['pk'\] not found"):
            read.rows(pk=1)
    finally:
        registry.remove(read.name)
