"""A study's JSONL export as PostgreSQL writes it (annotation.selectors.export_sql) against the
rows read in Python (annotation.selectors.flow.study_export_rows written by
core.streaming.jsonl_lines), line by line and byte by byte, on awkward data: quotes,
backslashes, tabs, newlines and other control characters, text outside ASCII, NULLs, nested
stored JSON, times with and without microseconds, every item kind."""

import json
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Func, TextField
from django.urls import reverse

from annotation.models import Annotation, Participant, Study, StudyItem
from annotation.selectors.export_sql import study_export_jsonl, study_export_line_queryset
from annotation.selectors.flow import EXPORT_FIELDS, study_export_rows
from benchmarks.models import Generator
from core.streaming import copied_lines, jsonl_lines
from tests.annotation.factories import make_annotation, make_study

pytestmark = pytest.mark.django_db

AWKWARD = (
    'a "quoted" back\\slash \\n not a newline, tab\there, newline\nand CR\r, '
    "bell\x07 \x01 \x1f \x7f, é 漢字 🙂 \u2028 \u00a0 </script> {}[],:"
)
LABELS = [
    {},
    {"choice": AWKWARD, "ratings": {"overall": 4, "order": 0}, "preferred": "b"},
    {"score": 0.5, "nested": [1, 2.25, None, True, False, "x\\y", {"k": []}], "neg": -3},
    {"big": 12345678901234567890, "one": 1.0, "tiny": 0.001, "empty": {}, "none": None},
]


def _awkward_study():
    """A study of regular, attention and qualification items labelled by three participants,
    one of them a signed-in user, with awkward free text and stored JSON."""
    study = make_study(n_items=3, n_attention=1, n_qualification=1)
    items = list(StudyItem.objects.filter(study=study).order_by("id"))
    regular = [i for i in items if i.kind == StudyItem.Kind.REGULAR]
    StudyItem.objects.filter(pk=regular[0].pk).update(generation_b_id=regular[1].generation_id)
    Generator.objects.filter(pk=regular[0].generation.generator_id).update(name=f"gen {AWKWARD}")
    user = User.objects.create(username="ré\"search'er")
    participants = [
        Participant.objects.create(study=study, prolific_pid=pid, stage=stage)
        for pid, stage in (('P"1\\', "working"), ("P2 🙂", "done"), ("P3", "screened_out"))
    ]
    Participant.objects.filter(pk=participants[2].pk).update(user=user, attention_failures=2)
    times = [
        datetime(2026, 12, 7, 9, 30, 0, tzinfo=UTC),
        datetime(2026, 12, 7, 9, 30, 1, 5, tzinfo=UTC),
        datetime(2026, 12, 7, 23, 59, 59, 999999, tzinfo=UTC),
    ]
    n = 0
    for item in items:
        for p in participants:
            failing = n % 2 == 1
            failures = (
                [
                    {"description": AWKWARD, "l1_steps": [1], "l2_steps": [3, 2]},
                    {"description": "", "l1_steps": [2], "l2_steps": None},
                    {"description": "only L1", "l1_steps": [4]},
                ]
                if n % 4 == 1
                else [{"description": "d", "l1_steps": [], "l2_steps": [4]}]
                if failing
                else []
            )
            make_annotation(
                item=item,
                participant=p,
                at=times[n % 3],
                active_ms=1000 + n,
                has_failure=failing,
                failures=failures,
                label=LABELS[n % len(LABELS)],
                comments=AWKWARD if n % 3 else "",
            )
            n += 1
    return study


def _python_lines(study) -> list[bytes]:
    return "".join(jsonl_lines(study_export_rows(study=study))).encode().splitlines(keepends=True)


def test_postgresql_writes_the_lines_python_writes_byte_for_byte():
    study = _awkward_study()
    expected = _python_lines(study)
    written = b"".join(copied_lines(study_export_line_queryset(study=study)))
    lines = written.splitlines(keepends=True)
    assert len(lines) == len(expected) == Annotation.objects.filter(item__study=study).count()
    for line, want in zip(lines, expected, strict=True):
        assert line == want
    rows = [json.loads(line) for line in lines]
    assert all(tuple(r) == EXPORT_FIELDS for r in rows)
    # the awkward values made it through, as themselves
    assert sum(r["comments"] == AWKWARD for r in rows) == 10
    assert {r["username"] for r in rows} == {"", "ré\"search'er"}
    assert {r["first_failure_l2_step"] for r in rows} == {None, 2, 4}
    for kind in ("attention", "qualification"):
        assert {r["attention_passed"] for r in rows if r["item_kind"] == kind} == {True, False}
    assert {r["attention_passed"] for r in rows if r["item_kind"] == "regular"} == {None}
    assert {r["served_at"][-6:] for r in rows} == {"+00:00"}
    assert {r["submitted_at"] for r in rows} >= {
        "2026-12-07T09:30:00+00:00",
        "2026-12-07T09:30:01.000005+00:00",
    }
    assert any(r["generation_b_id"] is not None for r in rows)
    assert all(any(r["label"] == label for r in rows) for label in LABELS)


def test_blocks_hold_whole_lines_whatever_their_size():
    study = _awkward_study()
    expected = b"".join(_python_lines(study))
    counts = {}
    for block_bytes in (1, 2000, 10**6):
        queryset = study_export_line_queryset(study=study)
        blocks = list(copied_lines(queryset, block_bytes=block_bytes))
        assert b"".join(blocks) == expected
        assert all(block.endswith(b"\n") for block in blocks)
        counts[block_bytes] = len(blocks)
    assert counts[1] == 15 and 1 < counts[2000] < 15 and counts[10**6] == 1


def test_a_number_stored_with_an_exponent_is_the_same_number_in_other_digits():
    """jsonb keeps a number as a decimal: 1e-05 reads back as 0.00001 (Python writes 1e-05)."""
    study = make_study(n_items=1)
    make_annotation(
        item=StudyItem.objects.get(study=study), annotator="P1", label={"p": 1e-05, "q": 1e16}
    )
    (line,) = b"".join(copied_lines(study_export_line_queryset(study=study))).splitlines()
    (expected,) = _python_lines(study)
    assert b'"label": {"p": 0.00001, "q": 10000000000000000}' in line
    assert line != expected.rstrip(b"\n") and json.loads(line) == json.loads(expected)


def test_a_download_closed_early_cancels_the_copy_and_leaves_the_connection_usable():
    study = _awkward_study()
    many = Func(template="generate_series(1, 2000000)::text", output_field=TextField())
    blocks = copied_lines(Study.objects.filter(pk=study.pk).values_list(many, flat=True))
    assert next(blocks).startswith(b"1\n2\n3\n")
    blocks.close()  # two million lines: the COPY is still running, and is cancelled
    assert Annotation.objects.filter(item__study=study).count() == 15
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_the_download_sends_the_postgresql_lines(client, make_user):
    study = _awkward_study()
    client.force_login(make_user("researcher", role="researcher"))
    response = client.get(reverse("annotation:study_export", args=[study.pk, "jsonl"]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    chunks = list(response.streaming_content)
    assert len(chunks) == 1  # one block of bytes, not one chunk a line
    assert chunks[0].splitlines(keepends=True) == _python_lines(study)


def test_another_database_gets_the_lines_python_writes(monkeypatch):
    """The embedded SQLite has no COPY: the lines are the rows read in Python (the demo test,
    tests/demo/test_run_demo.py, downloads them from a SQLite install)."""
    study = _awkward_study()
    monkeypatch.setattr(connection, "vendor", "sqlite")
    lines = list(study_export_jsonl(study=study))
    assert all(isinstance(line, str) for line in lines)
    assert "".join(lines).encode().splitlines(keepends=True) == _python_lines(study)
