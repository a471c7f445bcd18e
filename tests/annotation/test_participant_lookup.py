"""A submit looks its participant up once (annotation.selectors.annotator.annotator_for): one
read of the participant's row, whichever way the participant is known (the signed cookie, or
the logged-in account), and that read is the one that locks the assignment for the save."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotation, Participant
from tests.annotation.factories import current, item_page_fields, make_study, to_items, url

pytestmark = pytest.mark.django_db

# a statement that reads the participant's table (FROM or JOIN), not one that updates it
_READS_PARTICIPANT = re.compile(rf'(FROM|JOIN) "{Participant._meta.db_table}"')


def _participant_reads(queries) -> list[str]:
    return [q["sql"] for q in queries if _READS_PARTICIPANT.search(q["sql"])]


def _submit_counted(client, study, assignment, **headers):
    with CaptureQueriesContext(connection) as q:
        r = client.post(url("submit", study, assignment.pk), item_page_fields(), **headers)
    assert Annotation.objects.filter(assignment=assignment).exists()
    return r, _participant_reads(q.captured_queries)


def test_a_submit_reads_the_participant_once_by_the_signed_cookie(client):
    study = make_study(n_items=3, items_per_participant=3)
    to_items(client, study)
    client.get(url("item", study))
    r, reads = _submit_counted(client, study, current())
    assert r.status_code == 302 and r.url == url("item", study)
    assert len(reads) == 1, reads
    assert "FOR UPDATE" in reads[0]  # the same read locks the assignment's row


def test_a_submit_reads_the_participant_once_by_the_account(client, make_user):
    study = make_study(n_items=3, items_per_participant=3, entry="account")
    client.force_login(make_user("inhouse", role="annotator"))
    client.get(url("enter", study))
    client.post(url("consent", study), {"consent": "agree"})
    client.post(url("training", study))
    del client.cookies[f"h2r_p_{study.slug}"]  # known by the account alone
    client.get(url("item", study))
    assignment = Participant.objects.get(user__username="inhouse").assignments.get()
    r, reads = _submit_counted(client, study, assignment)
    assert r.status_code == 302 and r.url == url("item", study)
    assert len(reads) == 1, reads


def test_a_submit_answered_with_the_next_item_reads_the_participant_once_per_page(client):
    """In place: the save, then the next item's page in the same request, one read each."""
    study = make_study(n_items=3, items_per_participant=3)
    to_items(client, study)
    client.get(url("item", study))
    hx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_BOOSTED": "true"}
    r, reads = _submit_counted(client, study, current(), **hx)
    assert r.status_code == 200 and r["HX-Replace-Url"] == url("item", study)
    assert len(reads) == 2, reads
