"""Stored JSON the console only shows (core/admin_json.py): read as lists, never as JSON text with
``null``, ``true`` or a statistic's ``"undefined"`` key; JSON a person edits stays a JSON box."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from core.admin_json import json_html
from judging.models import LeaderboardReport


def test_json_html_reads_as_lists():
    assert json_html(None) == "-"
    assert json_html([]) == "-" and json_html({}) == "-"
    assert json_html(True) == "yes" and json_html(False) == "no"
    assert json_html(0) == "0" and json_html(0.25) == "0.25"
    assert json_html(["a", 2, True]) == "a, 2, yes"
    assert json_html({"kappa": None, "n": 3}) == (
        '<dl class="json"><dt>kappa</dt><dd>-</dd><dt>n</dt><dd>3</dd></dl>'
    )
    assert json_html([{"step": 1}, None]) == (
        '<ol class="json"><li><dl class="json"><dt>step</dt><dd>1</dd></dl></li><li>-</li></ol>'
    )
    # a statistic that could not be computed: the empty mark with its reason
    assert json_html({"value": None, "undefined": "no item submitted"}) == "- (no item submitted)"
    assert json_html({"value": 0.5, "undefined": "ignored"}).count("<dt>") == 2


def test_json_html_escapes_stored_text():
    html = json_html({"<b>": ['<script>alert("x")</script>', {"a": "&"}]})
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html and "&lt;b&gt;" in html and "&amp;" in html


@pytest.mark.django_db
def test_console_shows_a_stored_result_readably(client, make_user):
    report = LeaderboardReport.objects.create(
        key="k" * 64,
        judges=["judge-a", "judge-b"],
        result={
            "rows": [{"judge": "judge-a", "kappa": {"value": None, "undefined": "one label only"}}],
            "complete": True,
            "note": None,
        },
    )
    client.force_login(make_user("root", role="admin", staff=True))
    page = client.get(reverse("admin:judging_leaderboardreport_change", args=[report.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    shown = re.sub(r"<[^>]+>", " ", html.split('id="content-main"', 1)[1])
    assert "- (one label only)" in shown
    assert "judge-a, judge-b" in shown
    assert "yes" in shown
    for word in ("null", "undefined", "true", '"rows"'):
        assert word not in shown, word
    listing = client.get(reverse("admin:judging_leaderboardreport_changelist")).content.decode()
    assert "null" not in re.sub(r"<[^>]+>", " ", listing)
