"""The pay terms form: a control character, an over-long value or a bad number is
an error at its field, with what was typed kept, not the bare 400 page of the door; nothing is
saved."""

from __future__ import annotations

import html
from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import StudyPay

pytestmark = pytest.mark.django_db


def test_a_control_character_in_the_pay_terms_is_a_field_error(quality_study, client, make_user):
    client.force_login(make_user("pay-gate-admin", role="admin"))
    url = reverse("annotation:pay", args=[quality_study.pk])
    page = client.post(
        url, {"reward": "1.50", "exclusion_group_id": "grp\x00one", "estimated_minutes": "7"}
    )
    text = html.unescape(page.content.decode())
    assert page.status_code == 400 and "This request was refused" not in text
    assert 'id="pay-exclusion_group_id-error">Exclusion group id: contains a control character' in (
        text
    )
    assert 'value="1.50"' in text and 'value="7"' in text and 'value="grpone"' not in text
    assert not StudyPay.objects.filter(study=quality_study).exists()
    too_long = client.post(url, {"exclusion_group_id": "g" * 65, "estimated_minutes": "-3"})
    text = too_long.content.decode()
    assert too_long.status_code == 400 and "over the limit of 64" in text
    assert 'id="pay-estimated_minutes-error">' in text and "g" * 65 in text
    saved = client.post(url, {"reward": "2.25", "exclusion_group_id": "grp-1"})
    assert saved.status_code == 302
    terms = StudyPay.objects.get(study=quality_study)
    assert (terms.reward, terms.exclusion_group_id) == (Decimal("2.25"), "grp-1")


def test_a_control_character_in_the_bonus_and_exclusion_boxes_is_a_field_error(
    quality_study, client, make_user
):
    client.force_login(make_user("prolific-gate-admin", role="admin"))
    bonuses = client.post(
        reverse("annotation:prolific_bonuses", args=[quality_study.pk]),
        {"bonuses": "PA,0.50\nPB\x00,0.20"},
    )
    text = html.unescape(bonuses.content.decode())
    assert bonuses.status_code == 400 and "This request was refused" not in text
    assert 'id="bonus-csv-error">Bonuses: contains a control character (U+0000' in text
    assert "PA,0.50" in text  # what was typed stays in the box
    exclude = client.post(
        reverse("annotation:prolific_exclude", args=[quality_study.pk]),
        {"participants": "PA PB", "group_id": "G\x1b1"},
    )
    text = html.unescape(exclude.content.decode())
    assert exclude.status_code == 400 and "This request was refused" not in text
    assert 'id="exclude-group-error">Participant group id: contains a control character' in text
    assert ">PA PB</textarea>" in text
    stray = client.post(
        reverse("annotation:prolific_exclude", args=[quality_study.pk]),
        {"participants": "PA", "confirm": "1\x00"},
    )
    assert stray.status_code == 400 and "field confirm: contains a control character" in (
        html.unescape(stray.content.decode())
    )
