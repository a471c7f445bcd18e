"""The demo's uploaded label set, SIMULATED: a file as a researcher brings one (3 annotators × 60
items of binary critical-failure labels, a judge's verdicts on 600 items of two models;
``demo/fixtures/label_sets/simulated-3x60.csv``, made with a seeded simulation), uploaded
through the same service as the browser's upload, by the demo researcher. Kept as it is when
it exists."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model

from validation.label_sets.services import label_set_create
from validation.models import LabelSet

FILE = Path(__file__).resolve().parent / "fixtures" / "label_sets" / "simulated-3x60.csv"
NAME = "Demo labels: 3 annotators × 60 items, a judge on 600 (SIMULATED)"
DESCRIPTION = (
    "DEMO DATA: simulated labels (no person or model labelled these items); two models, "
    "model-a and model-b."
)


def label_set_demo_ensure(*, username: str = "researcher") -> LabelSet:
    existing = LabelSet.objects.filter(name=NAME).first()
    if existing is not None:
        return existing
    user = get_user_model().objects.filter(username=username).first()
    return label_set_create(
        name=NAME,
        data=FILE.read_bytes(),
        filename=FILE.name,
        annotator_kind="crowd",
        description=DESCRIPTION,
        user=user,
        max_bytes=settings.LABEL_SET_MAX_BYTES,
        binary=True,
    )
