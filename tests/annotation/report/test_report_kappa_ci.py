"""The study report page shows Fleiss' and Cohen's κ with their 95% bootstrap intervals."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.selectors import report as rs
from tests.annotation.factories import make_labelled_study

pytestmark = pytest.mark.django_db


def test_report_page_shows_kappa_intervals(researcher_client):
    study = make_labelled_study()
    report = rs.study_report(study=study)
    html = researcher_client.get(reverse("annotation:report", args=[study.pk])).content.decode()
    fleiss = report["fleiss_kappa"]["ci"]
    assert f"95% CI {fleiss['low']:.3f} – {fleiss['high']:.3f}" in html
    mean = report["cohen_kappa"]["mean"]["ci"]
    assert f"95% CI {mean['low']:.3f} – {mean['high']:.3f}" in html
    pairs = report["cohen_kappa"]["pairs"]
    shown = [p for p in pairs if p["kappa"].get("ci", {}).get("low") is not None]
    assert shown and all(
        f"{p['kappa']['ci']['low']:.3f} – {p['kappa']['ci']['high']:.3f}" in html for p in shown
    )
    assert not re.search(r"\b(nan|None|undefined)\b(?! —)", html.split("How to read")[0])
