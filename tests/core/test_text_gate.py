"""The one text gate (core.text) on API JSON bodies (core.parsers),
query parameters and form posts (core.middleware) — a 400 naming the field, nothing written."""

from __future__ import annotations

import pytest
from django.test import Client

from core.text import first_bad_text, strip_controls, text_error
from judging.models import JudgeRun


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x0b", "\x0c", "\x1f", "\x7f", "\x9f", "\ud800"])
def test_refused_characters(char):
    message = text_error(f"ab{char}c", "Comments")
    assert message.startswith("Comments: contains a control character (U+")
    assert "at character 3" in message
    assert strip_controls(f"ab{char}c") == ("abc", 1)


def test_tab_newline_cr_and_ordinary_unicode_pass():
    assert text_error("a\tb\nc\r\nd — café 🍞", "x") is None


def test_nested_paths_are_named():
    assert first_bad_text({"a": [1, {"b": "ok", "c": "x\x00"}]})[0] == "a[1].c"
    assert first_bad_text({"k\x00": 1})[0] == "<key>"
    assert first_bad_text({"a": ["fine", 2, None]}) is None


@pytest.mark.django_db
def test_api_json_body_with_nul_is_a_400_naming_the_field(make_user):
    c = Client()
    c.force_login(make_user("adm", role="admin"))
    r = c.post(
        "/api/judge-runs/",
        data='{"judge": 1, "selection": {"dataset": "d\\u0000"}}',
        content_type="application/json",
    )
    assert r.status_code == 400
    assert "U+0000 NUL" in r.json()["selection.dataset"][0]
    assert not JudgeRun.objects.exists()


@pytest.mark.django_db
def test_query_parameters_and_form_fields(make_user, admin_client):
    c = Client()
    c.force_login(make_user("res", role="researcher"))
    r = c.get("/api/studies/", {"search": "a\x00b"})
    assert r.status_code == 400 and "search" in r.json()
    r = c.get("/data/", {"q": "a\x00b"})
    assert r.status_code == 400 and "q: contains a control character" in r.content.decode()
    from django.contrib.auth.models import Group

    r = admin_client.post("/admin/auth/group/add/", {"name": "bad\x00name"})
    assert r.status_code == 400 and "name: contains a control character" in r.content.decode()
    assert not Group.objects.filter(name__startswith="bad").exists()


def test_command_line_arguments_are_gated():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "manage.py", "import_procedures", "x.jsonl", "--dataset", "bell\x07"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "error: --dataset: contains a control character (U+0007" in r.stderr
