"""Report, adjudication and exports are for researchers and admins only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Adjudication

pytestmark = pytest.mark.django_db


def page_urls(study):
    item = study.items_by_position[2].pk
    return [
        reverse("annotation:report", args=[study.pk]),
        reverse("annotation:report_partial", args=[study.pk]),
        reverse("annotation:queue", args=[study.pk]),
        reverse("annotation:adjudicate", args=[study.pk, item]),
        reverse("annotation:labels_export", args=[study.pk, "csv"]),
        reverse("annotation:gold_export", args=[study.pk, "jsonl"]),
    ]


def api_urls(study):
    return [
        reverse("annotation_api:report", args=[study.pk]),
        reverse("annotation_api:adjudication_queue", args=[study.pk]),
        reverse("annotation_api:item_adjudication", args=[study.items_by_position[2].pk]),
        reverse("annotation_api:labels", args=[study.pk]),
        reverse("annotation_api:gold", args=[study.pk]),
    ]


def test_anonymous_is_sent_to_login(labelled_study, client):
    for url in page_urls(labelled_study):
        r = client.get(url)
        assert r.status_code == 302 and r["Location"].startswith(reverse("login")), url
    for url in api_urls(labelled_study):
        assert client.get(url).status_code in (401, 403), url


@pytest.mark.parametrize("staff", [False, True])
def test_annotators_are_refused(labelled_study, client, make_user, staff):
    client.force_login(make_user(f"annotator-{staff}", role="annotator", staff=staff))
    for url in page_urls(labelled_study) + api_urls(labelled_study):
        assert client.get(url).status_code == 403, url
    item = labelled_study.items_by_position[2]
    r = client.post(
        reverse("annotation:adjudicate", args=[labelled_study.pk, item.pk]),
        {"has_failure": "0"},
    )
    assert r.status_code == 403
    r = client.put(
        reverse("annotation_api:item_adjudication", args=[item.pk]),
        {"has_failure": False},
        content_type="application/json",
    )
    assert r.status_code == 403
    assert not Adjudication.objects.exists()


def test_admins_may_read(labelled_study, client, make_user):
    client.force_login(make_user("report-admin", role="admin"))
    for url in page_urls(labelled_study) + api_urls(labelled_study)[:2]:
        assert client.get(url).status_code == 200, url


def test_adjudication_form_needs_csrf(labelled_study, make_user):
    from django.test import Client

    c = Client(enforce_csrf_checks=True)
    c.force_login(make_user("csrf-researcher", role="researcher"))
    item = labelled_study.items_by_position[2]
    r = c.post(
        reverse("annotation:adjudicate", args=[labelled_study.pk, item.pk]),
        {"has_failure": "0"},
    )
    assert r.status_code == 403 and not Adjudication.objects.exists()
