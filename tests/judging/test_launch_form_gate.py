"""The judge-run launch form in the console: a control character is an error at
its field with the typed values kept, not the bare 400 page; nothing is estimated or launched."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.models import JudgeRun, JudgeRunEstimate
from tests.judging.factories import make_data, make_judge

pytestmark = pytest.mark.django_db


def test_a_control_character_in_the_launch_form_is_a_field_error(make_user, roles, client):
    data = make_data(n=2)
    judge = make_judge(name="gate-judge")
    client.force_login(make_user("root", role="admin", staff=True))
    page = client.post(
        reverse("admin:judging_judgerun_launch"),
        {"judge": judge.pk, "dataset": data["dataset"].pk, "generation_ids": "1,\x002"},
    )
    html = page.content.decode()
    assert page.status_code == 200 and "This request was refused" not in html
    assert "Generation ids: contains a control character (U+0000 NUL)" in html
    assert "1," in html  # what was typed stays in the field
    assert not JudgeRun.objects.exists() and not JudgeRunEstimate.objects.exists()
    stray = client.post(
        reverse("admin:judging_judgerun_launch"),
        {"judge": judge.pk, "dataset": data["dataset"].pk, "estimate": "7\x01"},
    )
    assert stray.status_code == 200 and "field estimate: contains a control character" in (
        stray.content.decode()
    )
    assert not JudgeRunEstimate.objects.exists()
