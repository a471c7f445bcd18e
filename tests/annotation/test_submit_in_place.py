"""A submit sent by the item page's script (htmx: ``HX-Request``) is answered in one request:
the next item's page with ``HX-Replace-Url`` (the item page's address), this item's page again with
its refusal and what was typed, or ``HX-Redirect`` to any other page of the flow. A plain form
post keeps post, redirect, get (annotation.views.item_flow)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotation, Assignment, Participant
from tests.annotation.factories import current, item_page_fields, make_study, to_items, url

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_BOOSTED": "true"}


def aged(assignment, seconds=120):
    Assignment.objects.filter(pk=assignment.pk).update(
        served_at=timezone.now() - timedelta(seconds=seconds)
    )
    return assignment


def test_a_saved_item_is_answered_with_the_next_item(client):
    study = make_study(n_items=3, items_per_participant=3)
    to_items(client, study)
    client.get(url("item", study))
    first = aged(current())
    r = client.post(url("submit", study, first.pk), item_page_fields(comments="one"), **HX)
    assert r.status_code == 200 and r["HX-Replace-Url"] == url("item", study)
    second = current()
    assert second.pk != first.pk
    page = r.content.decode()
    assert f'action="{url("submit", study, second.pk)}"' in page and "Item 2 of 3" in page
    assert "no-store" in r["Cache-Control"]  # the back button asks again, never a cached item
    assert Annotation.objects.get().comments == "one"
    # the plain post of the same page: stored, then a redirect to the item page
    aged(second)
    r = client.post(url("submit", study, second.pk), item_page_fields(comments="two"))
    assert r.status_code == 302 and r.url == url("item", study)
    assert Annotation.objects.count() == 2


def test_a_refused_submit_comes_back_in_place_with_what_was_typed(client):
    study = make_study(min_seconds_per_item=90)
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    fields = item_page_fields(comments="typed before the time was up")
    r = client.post(url("submit", study, a.pk), fields, **HX)
    assert r.status_code == 200 and r["HX-Replace-Url"] == url("item", study)
    page = r.content.decode()
    assert "at least 90 s" in page and "typed before the time was up" in page
    assert f'action="{url("submit", study, a.pk)}"' in page  # the same item
    assert not Annotation.objects.exists()
    # shown once: the item page afterwards is the item as saved
    assert "at least 90 s" not in client.get(url("item", study)).content.decode()


def test_other_pages_of_the_flow_are_named_for_the_browser_to_load(client):
    study = make_study(n_items=1, items_per_participant=1)
    to_items(client, study)
    client.get(url("item", study))
    a = aged(current())
    r = client.post(url("submit", study, a.pk), item_page_fields(), **HX)
    assert r.status_code == 200 and r["HX-Redirect"] == url("done", study)
    assert not r.content and not r.has_header("HX-Replace-Url")
    assert Participant.objects.get().stage == Participant.Stage.DONE
    # the same item sent again (another tab): its first answer, on its own page
    r = client.post(url("submit", study, a.pk), item_page_fields(choice="failure"), **HX)
    assert r["HX-Redirect"] == url("submitted", study, a.pk)
    assert Annotation.objects.get().has_failure is False


def test_someone_elses_or_no_session_gets_its_refusal_page(client):
    study = make_study()
    to_items(client, study)
    client.get(url("item", study))
    a = current()
    client.cookies.clear()
    r = client.post(url("submit", study, a.pk), item_page_fields(), **HX)
    assert r.status_code == 403 and "could not find your session" in r.content.decode()
    assert not r.has_header("HX-Replace-Url") and not Annotation.objects.exists()
