"""The study console pages: a control character typed in a study's or its pay
terms' console form is an error at its field with what was typed kept, not the bare 400 page
of the door (the ModelAdmins' form is core.forms.GatedModelForm); nothing is saved."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from annotation.models import Study, StudyPay
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db


def test_a_control_character_on_the_study_console_page_is_a_field_error(make_user, client):
    study = make_study(n_items=1)
    client.force_login(make_user("root", role="admin", staff=True))
    page = client.post(
        reverse("admin:annotation_study_change", args=[study.pk]),
        {"name": "Renamed\x00 study", "slug": study.slug},
    )
    text = html.unescape(page.content.decode())
    assert page.status_code == 200 and "This request was refused" not in text
    assert "Name: contains a control character (U+0000 NUL)" in text
    assert "Renamed" in text  # what was typed stays in the field
    assert Study.objects.get(pk=study.pk).name == study.name
    pay = client.post(
        reverse("admin:annotation_studypay_add"),
        {"study": study.pk, "currency": "GBP", "exclusion_group_id": "g\x07"},
    )
    text = html.unescape(pay.content.decode())
    assert pay.status_code == 200 and "This request was refused" not in text
    assert "Exclusion group id: contains a control character (U+0007" in text
    assert not StudyPay.objects.exists()


def test_a_control_character_on_a_version_or_mining_console_page_is_a_field_error(
    make_user, client
):
    client.force_login(make_user("root2", role="admin", staff=True))
    page = client.post(
        reverse("admin:annotation_codebookversion_add"),
        {"content": '{"title": "x"}', "note": "typo\x00 fixed"},
    )
    text = html.unescape(page.content.decode())
    assert page.status_code == 200 and "This request was refused" not in text
    assert "Note: contains a control character (U+0000 NUL)" in text and "typo" in text
    from mining.models import MiningBatch

    batch = MiningBatch.objects.create(name="batch one")
    mined = client.post(
        reverse("admin:mining_miningbatch_change", args=[batch.pk]), {"name": "two\x07"}
    )
    text = html.unescape(mined.content.decode())
    assert mined.status_code == 200 and "This request was refused" not in text
    assert "Name: contains a control character (U+0007" in text
    assert MiningBatch.objects.get(pk=batch.pk).name == "batch one"


def test_the_codebook_version_add_page_shows_an_empty_box_not_null(make_user, client):
    """A new codebook's JSON box is empty (it showed ``null``)."""
    client.force_login(make_user("root3", role="admin", staff=True))
    page = client.get(reverse("admin:annotation_codebookversion_add")).content.decode()
    assert 'name="content"' in page and "null</textarea>" not in page
