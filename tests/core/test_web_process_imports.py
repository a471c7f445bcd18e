"""A web process imports no statistics or model library to serve annotators: each
gunicorn worker held numpy, scipy, krippendorff and more (~165 MiB) from its start. A fresh
process (tests/support/item_path_probe.py) starts as a worker does, then serves a participant's
entry, consent, codebook, item page and save; none of the heavy modules may be imported by then,
and what it saved must be in the database."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.models import Annotation, Participant
from tests.annotation.factories import make_study
from tests.support.item_path_probe import HEAVY
from tests.support.worker import run_web_probe

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db(transaction=True)  # the probe process reads the committed study
def test_item_path_imports_no_heavy_module():
    study = make_study(n_items=3, prolific_study_id="PROBE")
    probe = run_web_probe("tests.support.item_path_probe", study.slug)
    statuses = dict(probe["statuses"])
    # the path was served for real: entry → consent → codebook → item → save → next item
    assert statuses == {
        "enter": 302,
        "consent page": 200,
        "consent": 302,
        "codebook": 302,
        "item page": 200,
        "save": 302,
        "next item page": 200,
    }, probe["statuses"]
    assert Participant.objects.filter(study=study, prolific_pid="PROBE1").count() == 1
    assert Annotation.objects.filter(participant__study=study).count() == 1
    where = json.dumps(probe["imported_by"], indent=1)  # the project lines that imported each
    assert probe["heavy_at_start"] == [], f"imported by django.setup() + the URLconf: {where}"
    assert probe["heavy"] == [], f"imported while serving the item path: {where}"


def test_the_probe_sees_a_heavy_import():
    """The check can fail: the same probe names numpy once something imports it."""
    code = (
        "import numpy, sys; from tests.support.item_path_probe import heavy_loaded;"
        "print(heavy_loaded())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "numpy" in out.stdout and "numpy" in HEAVY
