"""An autosave racing its own item's submit on PostgreSQL: the submit locks the assignment's row,
then deletes the draft; the autosave takes the same row first, so the two queue instead of
deadlocking (the other order gave the submit a 500 in the paid-study browser test)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from annotation.models import Assignment, Draft
from annotation.services.assignment import participant_current_assignment
from annotation.services.submission import draft_save
from tests.annotation.factories import full_label, make_study, working_participant

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_autosave_waits_for_the_submit_holding_its_assignment_and_leaves_no_draft():
    study = make_study()
    a = participant_current_assignment(participant=working_participant(study, "A"))
    label = full_label(has_failure=True, comments="half done")
    assert draft_save(assignment=a, label=label)  # a draft exists, as after any autosave
    locked, errors, saved = threading.Event(), [], []

    def submit_like():
        """The submit's order: the assignment's row, a moment later the draft."""
        try:
            with transaction.atomic():
                Assignment.objects.select_for_update().get(pk=a.pk)
                locked.set()
                time.sleep(0.8)  # the autosave arrives meanwhile
                Draft.objects.filter(assignment_id=a.pk).delete()
                Assignment.objects.filter(pk=a.pk).update(state=Assignment.State.SUBMITTED)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    def autosave():
        try:
            assert locked.wait(10)
            saved.append(draft_save(assignment=a, label=label))  # `a` still reads "working"
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit_like), threading.Thread(target=autosave)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []  # no "deadlock detected"
    assert saved == [False]  # the submit won: the autosave is ignored
    assert not Draft.objects.filter(assignment_id=a.pk).exists()
