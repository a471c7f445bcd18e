"""Gwet's AC1 in a study's human↔human agreement report (selector, page, API)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.selectors import report as rs


def test_study_report_has_gwet_ac1_hand_computed(labelled_study, researcher_client):
    """Binary labels of the conftest study (A, B, C): T T T / F F F / T T F / F F T / T T T /
    F T F. p_a = (3·1 + 3·(2·1)/(3·2))/6 = 2/3; π_failure = mean(1, 0, 2/3, 1/3, 1, 1/3) = 5/9;
    p_e = 2·(5/9)·(4/9) = 40/81; AC1 = (2/3 − 40/81)/(1 − 40/81) = 14/41 = 0.341."""
    report = rs.study_report(study=labelled_study, use_cache=False)
    ac1 = report["gwet_ac1"]
    assert ac1["value"] == pytest.approx(14 / 41)
    assert ac1["pa"] == pytest.approx(2 / 3) and ac1["pe"] == pytest.approx(40 / 81)
    assert ac1["ci"]["confidence"] == 0.95 and ac1["ci"]["low"] <= 14 / 41 <= ac1["ci"]["high"]
    html = researcher_client.get(reverse("annotation:report", args=[labelled_study.pk]))
    html = html.content.decode()
    assert 'id="stat-ac1"><b>0.341</b>' in html and "Gwet's AC1" in html
    body = researcher_client.get(reverse("annotation_api:report", args=[labelled_study.pk]))
    assert body.json()["gwet_ac1"]["value"] == pytest.approx(14 / 41)
