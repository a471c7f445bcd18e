"""A hand-computed fixture: four participants' labels, times and attention checks, written
straight to the database so every figure of the quality and pay pages is known in advance
(the working is in test_quality_figures.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AttentionCheckResult, Participant
from tests.annotation.factories import make_annotation, make_study

T, F = True, False
# regular item position -> participant -> has_failure (absent: not labelled)
REGULAR = {
    0: {"A": T, "B": T, "C": T, "D": F},
    1: {"A": F, "B": F, "C": F, "D": F},
    2: {"A": T, "B": T, "C": F},
    3: {"A": F, "B": F, "C": T},
    4: {"A": T, "B": F, "C": T, "D": T},
    5: {"A": F, "B": F, "C": F, "D": T},
}
# active seconds per regular item, in position order of the items each labelled
SECONDS = {
    "A": [40, 50, 60, 40, 50, 60],
    "B": [45] * 6,
    "C": [30, 30, 30, 30, 30, 36],
    "D": [20] * 4,
}
# known items: k0 expects a failure, k1 expects none
KNOWN = {"A": (T, F), "B": (T, T), "D": (F, T)}
PLANTED = {"A": [T, T], "B": [T, F], "D": [F, F]}  # attention check results (passed?)


@pytest.fixture
def quality_study(db):
    study = make_study(n_items=6, n_attention=2, overlap=4, min_seconds_per_item=30)
    regular = {i.position: i for i in study.items.filter(kind="regular")}
    k0, k1 = list(study.items.filter(kind="attention").order_by("id"))
    k1.expected_has_failure = False
    k1.save(update_fields=["expected_has_failure"])
    start = timezone.now() - timedelta(hours=2)
    people = {}
    for name in ("A", "B", "C", "D"):
        p = Participant.objects.create(study=study, prolific_pid=f"PID_{name}", stage="done")
        people[name] = p
        at = start
        times = iter(SECONDS[name])
        for pos in sorted(REGULAR):
            if name in REGULAR[pos]:
                at += timedelta(minutes=1)
                make_annotation(
                    item=regular[pos],
                    participant=p,
                    has_failure=REGULAR[pos][name],
                    active_ms=next(times) * 1000,
                    at=at,
                )
        for item, value in zip((k0, k1), KNOWN.get(name, ()), strict=False):
            at += timedelta(minutes=1)
            a = make_annotation(
                item=item, participant=p, has_failure=value, active_ms=10_000, at=at
            ).assignment
        for passed in PLANTED.get(name, ()):
            AttentionCheckResult.objects.create(
                participant=p, assignment=a, kind="planted", passed=passed
            )
    study.people = people
    return study
