"""The item path's one-statement writes (annotation.prepared_cte, PostgreSQL): the claim gives
what the ORM claim gives (the item as its page shows it, a slot taken, never past k, never an
item twice, never a second open item), the submit writes what the separate statements wrote,
and the system check fails when the models no longer fit the composed SQL."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import prepared, prepared_cte
from annotation.models import Annotation, Assignment, Draft, Participant, StudyItem
from annotation.selectors.annotator import assignment_for_cookie, participant_for_slug
from annotation.selectors.flow import study_item_for_page
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import annotation_submit
from tests.annotation.factories import full_label, make_study, working_participant

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's CTEs"),
]


def _values(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def _state(study, p):
    return participant_for_slug(slug=study.slug, participant_id=p.pk, with_assignment_state=True)


def test_the_claim_is_one_statement_and_gives_what_the_orm_reads():
    study = make_study(n_items=3, overlap=2)
    p = working_participant(study, "PID_CTE")
    participant = _state(study, p)
    with CaptureQueriesContext(connection) as q:
        a = participant_current_assignment(participant=participant)
    claims = [x["sql"] for x in q.captured_queries if "INSERT" in x["sql"]]
    assert len(claims) == 1 and claims[0].startswith("WITH head")
    stored = Assignment.objects.get(pk=a.pk)
    assert _values(stored) == _values(a) and stored.state == Assignment.State.ACTIVE
    assert a.participant_id == p.pk and a.is_new is True
    want = study_item_for_page(item_id=a.item_id)
    assert _values(a.item) == _values(want) and want.n_assigned == 1
    assert _values(a.item.generation) == _values(want.generation)
    assert _values(a.item.generation.procedure) == _values(want.generation.procedure)
    assert isinstance(a.item.generation.predicted_steps, list)
    # a refresh lands on the same assignment, nothing claimed twice
    assert participant_current_assignment(participant=_state(study, p)).pk == a.pk
    assert Assignment.objects.filter(participant=p).count() == 1


def test_the_claim_never_passes_k_nor_gives_an_item_twice():
    study = make_study(n_items=1, overlap=1, items_per_participant=5)
    first = working_participant(study, "PID_A")
    second = working_participant(study, "PID_B")  # in before the study is full
    a = participant_current_assignment(participant=_state(study, first))
    assert a is not None
    assert participant_current_assignment(participant=_state(study, second)) is None
    assert StudyItem.objects.get(pk=a.item_id).n_assigned == 1
    assert Participant.objects.get(pk=second.pk).stage == Participant.Stage.DONE


def test_a_claim_refused_by_the_database_writes_nothing():
    study = make_study(n_items=3, overlap=2)
    p = working_participant(study, "PID_TABS")
    stale = _state(study, p)  # read before another tab claimed
    other_tab = participant_current_assignment(participant=_state(study, p))
    slots = dict(StudyItem.objects.filter(study=study).values_list("pk", "n_assigned"))
    again = participant_current_assignment(participant=stale)
    assert again.pk == other_tab.pk  # the locked path finds the other tab's item
    assert dict(StudyItem.objects.filter(study=study).values_list("pk", "n_assigned")) == slots
    assert Assignment.objects.filter(participant=p).count() == 1


@pytest.mark.parametrize("kind", ["regular", "attention"])
def test_the_submit_is_one_statement_with_all_its_writes(kind):
    study = make_study(n_items=2)
    p = working_participant(study, "PID_SAVE")
    a = participant_current_assignment(participant=_state(study, p))
    StudyItem.objects.filter(pk=a.item_id).update(kind=kind, expected_has_failure=False)
    Assignment.objects.filter(pk=a.pk).update(served_at=timezone.now() - timedelta(seconds=9))
    Draft.objects.create(assignment_id=a.pk, data={"choice": "none"}, updated_at=timezone.now())
    loaded = assignment_for_cookie(slug=study.slug, participant_id=p.pk, assignment_id=a.pk)
    with CaptureQueriesContext(connection) as q:
        result = annotation_submit(assignment=loaded, label=full_label(), active_ms=1500)
    writes = [x["sql"] for x in q.captured_queries if x["sql"].startswith("WITH ann")]
    assert len(writes) == 1 and result.created
    stored = Annotation.objects.get(assignment_id=a.pk)
    assert stored.pk == result.annotation.pk and _values(stored) == _values(result.annotation)
    done = Assignment.objects.get(pk=a.pk)
    assert done.state == Assignment.State.SUBMITTED and done.submitted_at == stored.submitted_at
    assert not Draft.objects.filter(assignment_id=a.pk).exists()
    assert Participant.objects.get(pk=p.pk).n_done == (1 if kind == "regular" else 0)


def test_the_check_passes_and_fails_when_the_models_no_longer_fit(monkeypatch):
    assert prepared_cte.check_composed_statements() == []
    fields = [f for f in prepared.NEW_ASSIGNMENT.fields if f.attname != "item_id"]
    monkeypatch.setattr(prepared.NEW_ASSIGNMENT, "fields", fields)
    for statement in prepared_cte.COMPOSED:
        monkeypatch.setattr(statement, "_sql", {})
    errors = prepared_cte.check_composed_statements()
    assert [e.id for e in errors] == ["annotation.E001", "annotation.E001"]
    assert "item_id" in errors[0].msg
