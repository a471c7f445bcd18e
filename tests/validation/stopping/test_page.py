"""The target on the study page: the slot on the progress page, the panel with the interval
and the target (asking again while the study is open), the note once reached, and the resume:
admins only (a researcher sees the note, no button, and is refused), CSRF checked."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Study
from tests.validation.stopping.conftest import label_many, label_next, make_target_study
from validation.active.stats import MIN_LABELLED_TO_STOP
from validation.stopping.services import study_check_target

pytestmark = pytest.mark.django_db
PANEL = {"HTTP_HX_REQUEST": "true"}


def login(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


def stopped_study() -> Study:
    study = make_target_study(target=0.08)
    label_many(study, MIN_LABELLED_TO_STOP - 10)
    for _ in range(50):
        assert label_next(study, "P1")
        if study_check_target(study=study).startswith("reached"):
            study.refresh_from_db()
            return study
    raise AssertionError("the target was never reached")


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_the_panel_shows_the_interval_live_and_the_target(researcher):
    study = make_target_study(n_items=20, n_more=20, target=0.05)
    client = login(researcher)
    progress = client.get(study.get_absolute_url()).content.decode()
    target_url = reverse("validation:study_target", args=[study.pk])
    assert 'id="study-target"' in progress and f'hx-get="{target_url}"' in progress
    empty = client.get(target_url, **PANEL)
    assert "No interval yet:" in text(empty) and "±5.00 points" in text(empty)
    for _ in range(10):
        assert label_next(study, "P1")
    panel = client.get(target_url, **PANEL)
    body = panel.content.decode()
    assert panel.status_code == 200 and 'hx-trigger="every 1s"' in body  # asks again
    shown = text(panel)
    assert "half-width of the 95% interval now" in shown and "±5.00 points" in shown
    assert re.search(r"±\d+\.\d\d points half-width", shown)
    assert "Stopped on" not in shown and "target-resume" not in body
    for bad in ("None", "nan", "undefined"):
        assert bad not in shown
    # the next poll, nothing changed: it waits longer
    again = client.get(f"{target_url}?wait=1&seen=open:10:False", **PANEL).content.decode()
    assert 'hx-trigger="every 1.5s"' in again


def test_no_target_no_panel(researcher):
    study = make_target_study(n_items=5, n_more=5, target=None)
    client = login(researcher)
    assert 'id="study-target"' not in client.get(study.get_absolute_url()).content.decode()
    assert client.get(reverse("validation:study_target", args=[study.pk])).status_code == 404


def test_once_reached_the_note_and_the_resume_for_admins_only(researcher, admin):
    study = stopped_study()
    target_url = reverse("validation:study_target", args=[study.pk])
    resume_url = reverse("validation:study_target_resume", args=[study.pk])
    kept = study.target_reached_interval
    note = (
        f"Stopped on {study.target_reached_at:%Y-%m-%d %H:%M} UTC: the interval "
        f"±{100 * kept['half_width']:.2f} points reached the target ±8.00 points with "
        f"{kept['n_labels']} labels."
    )
    as_researcher = login(researcher)
    panel = as_researcher.get(target_url, **PANEL)
    assert note in text(panel) and "An admin can resume it." in text(panel)
    assert (
        "target-resume" not in panel.content.decode() and "hx-trigger" not in panel.content.decode()
    )
    progress = as_researcher.get(study.get_absolute_url()).content.decode()
    assert 'name="status" value="open"' not in progress  # the plain Resume is not offered
    assert as_researcher.post(resume_url).status_code == 403
    assert (
        as_researcher.post(study.get_absolute_url() + "status/", {"status": "open"}).status_code
        == 302
    )
    study.refresh_from_db()
    assert study.status == Study.Status.PAUSED  # refused, with the reason shown

    as_admin = login(admin, enforce_csrf_checks=True)
    assert "target-resume" in as_admin.get(target_url, **PANEL).content.decode()
    assert as_admin.post(resume_url).status_code == 403  # no CSRF token
    study.refresh_from_db()
    assert study.target_resumed_at is None
    page = as_admin.get(study.get_absolute_url())
    token = page.cookies["csrftoken"].value
    done = as_admin.post(resume_url, {"csrfmiddlewaretoken": token}, follow=True)
    assert "Resumed: new items are handed out again." in text(done)
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.target_resumed_at is not None
    after = text(as_admin.get(target_url, **PANEL))
    assert note in after and "Resumed on" in after and "does not stop it again" in after
