"""Judgment import accepts every record the reference writes and checks ``predicted_steps``
against the stored generation."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from judging.models import Judgment
from tests.judging.factories import make_data, record, write

pytestmark = pytest.mark.django_db


def stored_steps(i, gname="gen-a"):
    return [f"{gname} step {k} for {i}" for k in range(1, 5)]


def test_records_as_the_reference_writes_them_are_accepted(tmp_path):
    make_data(n=5, generators=("gen-a",))
    failures = [
        {"failure": "", "L1_steps": [0], "L2_steps": []},  # empty text, step 0
        {"failure": "  spaced  ", "L1_steps": [-1, 99], "L2_steps": [0, 0]},  # no range check
    ]
    records = [
        record(
            "ex-00000",
            critical_failures=failures,
            n_failures=2,
            has_failure=True,
            predicted_steps=stored_steps(0),
        ),
        # a parse failure as the reference records it: {} normalised
        record("ex-00001", parse_failed=True, reasoning="", predicted_steps=stored_steps(1)),
        record("ex-00002", critical_failures=[{"failure": "x"}], n_failures=1, has_failure=True),
        # predicted_steps as the judge saw them: stripped, empty ones dropped
        record("ex-00003", predicted_steps=[" " + s + " " for s in stored_steps(3)] + ["  "]),
        record("ex-00004", reasoning="", predicted_steps=stored_steps(4)),
    ]
    call_command(
        "import_judgments", write(tmp_path, records), "--judge", "ref", "--generator", "gen-a"
    )
    j = Judgment.objects.get(source_example_id="ex-00000")
    assert j.critical_failures == [
        {"failure": "", "L1_steps": [0], "L2_steps": []},
        {"failure": "  spaced  ", "L1_steps": [-1, 99], "L2_steps": [0, 0]},
    ]
    assert j.n_failures == 2 and j.has_failure
    assert Judgment.objects.get(source_example_id="ex-00002").critical_failures == [
        {"failure": "x", "L1_steps": [], "L2_steps": []}
    ]
    assert Judgment.objects.filter(parse_failed=True).count() == 1
    assert Judgment.objects.count() == 5


def test_predicted_steps_that_differ_are_refused_naming_the_line(tmp_path):
    make_data(n=3, generators=("gen-a",))
    changed = stored_steps(1)
    changed[2] = "something else"
    records = [
        record("ex-00000", predicted_steps=stored_steps(0)),
        record("ex-00001", predicted_steps=changed),
        record("ex-00002", predicted_steps=stored_steps(2)[:3]),
        {**record("ex-00000"), "source_example_id": "ex-00000x", "predicted_steps": "x"},
    ]
    with pytest.raises(CommandError) as info:
        call_command(
            "import_judgments", write(tmp_path, records), "--judge", "ref", "--generator", "gen-a"
        )
    msg = str(info.value)
    assert (
        "line 2, field 'predicted_steps': differ from the stored generation of 'gen-a' for "
        "'ex-00001': step 3 is 'something else' in the file but 'gen-a step 3 for 1' stored"
    ) in msg
    assert "line 3, field 'predicted_steps'" in msg and "3 step(s) in the file, 4 stored" in msg
    assert "line 4, field 'predicted_steps': must be a list of strings" in msg
    assert "line 1" not in msg
    assert Judgment.objects.count() == 0


@pytest.mark.parametrize(
    ("failure", "field"),
    [
        ({"failure": 3}, "critical_failures[0].failure"),
        ({"failure": "x", "L1_steps": [True]}, "critical_failures[0].L1_steps"),
        ({"failure": "x", "L2_steps": ["2"]}, "critical_failures[0].L2_steps"),
        ({"failure": "x", "L2_steps": [1.5]}, "critical_failures[0].L2_steps"),
    ],
)
def test_what_the_reference_never_writes_is_still_refused(tmp_path, failure, field):
    make_data(n=1, generators=("gen-a",))
    rec = record("ex-00000", critical_failures=[failure], n_failures=1, has_failure=True)
    with pytest.raises(CommandError, match=rf"line 1, field '{field}'".replace("[", r"\[")):
        call_command(
            "import_judgments", write(tmp_path, [rec]), "--judge", "ref", "--generator", "gen-a"
        )
