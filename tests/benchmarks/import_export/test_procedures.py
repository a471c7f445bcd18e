"""import_procedures and export_procedures end to end on the database: the accepted shapes, a
lossless round trip, idempotency, --update, and refusals that leave the database unchanged with
messages naming line and field."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError

from benchmarks.models import Dataset, Procedure
from tests.benchmarks.import_export.support import EXAMPLES, export, run, snapshot, write_jsonl

pytestmark = pytest.mark.django_db


def test_import_procedures_creates_dataset_and_reports_counts(examples_file):
    out = run("import_procedures", str(examples_file), "--dataset", "bench", "--version", "v2")
    assert "created 3, unchanged 0, updated 0" in out
    ds = Dataset.objects.get(name="bench", version="v2")
    p1 = ds.procedures.get(source_example_id="doc-1")
    assert (
        p1.topic.slug == "food-dining"
        and p1.steps == EXAMPLES[0]["steps"]
        and p1.url == EXAMPLES[0]["url"]
    )
    p3 = ds.procedures.get(source_example_id="doc-3")
    assert (p3.goal, p3.source_text, p3.topic.slug) == (
        "Measure g with a pendulum",
        "physics notes",
        "science-math-tech",
    )
    assert ds.procedures.get(source_example_id="doc-2").topic is None


def test_procedure_round_trip_is_lossless(bench, tmp_path):
    first = export("export_procedures", "--dataset", "bench")
    assert [r["source_example_id"] for r in first] == ["doc-1", "doc-2", "doc-3"]
    assert (
        first[0]["topic"] == "Food & Dining" and first[2]["topic"] == "Science, Math & Technology"
    )
    assert (
        first[2]["source_text"] == "physics notes"
        and first[0]["schema_version"] == "how2bench.example.v1"
    )
    out_file = tmp_path / "exported.jsonl"
    run("export_procedures", "--dataset", "bench", "-o", str(out_file))
    assert [json.loads(x) for x in out_file.read_text(encoding="utf-8").splitlines()] == first
    run("import_procedures", str(out_file), "--dataset", "copy")
    assert export("export_procedures", "--dataset", "copy@v1") == first


def test_reimport_is_idempotent(bench, examples_file):
    before = snapshot()
    out = run("import_procedures", str(examples_file), "--dataset", "bench")
    assert "created 0, unchanged 3, updated 0" in out
    assert snapshot() == before


def test_changed_content_is_refused_without_update_and_replaced_with_it(bench, tmp_path):
    changed = [
        dict(EXAMPLES[0], goal="Bake a rye loaf"),
        EXAMPLES[1],
        {"source_example_id": "doc-4", "goal": "New", "steps": ["One."]},
    ]
    path = write_jsonl(tmp_path / "changed.jsonl", changed)
    before = snapshot()
    with pytest.raises(CommandError) as err:
        run("import_procedures", str(path), "--dataset", "bench")
    assert (
        "line 1, field 'source_example_id': 'doc-1' is already in bench@v1 with different content"
        in str(err.value)
    )
    assert "nothing imported" in str(err.value)
    assert snapshot() == before  # doc-4 was not created either
    out = run("import_procedures", str(path), "--dataset", "bench", "--update")
    assert "created 1, unchanged 1, updated 1" in out
    assert bench.procedures.get(source_example_id="doc-1").goal == "Bake a rye loaf"
    assert bench.procedures.count() == 4  # doc-3, absent from the file, is kept


BAD_EXAMPLE_FILES = {
    "malformed json": ([], ['{"source_example_id": "x", "goal": '], "line 4: malformed JSON"),
    "non-object": ([], ["[1, 2, 3]"], "line 4: expected a JSON object, got array"),
    "missing goal": (
        [{"source_example_id": "x", "steps": ["a"]}],
        [],
        "line 4, field 'goal': is missing",
    ),
    "empty steps": (
        [{"source_example_id": "x", "goal": "g", "steps": []}],
        [],
        "line 4, field 'steps': must not be empty",
    ),
    "wrong step type": (
        [{"source_example_id": "x", "goal": "g", "steps": ["a", {"b": 1}]}],
        [],
        "line 4, field 'steps[1]': must be a string, got object",
    ),
    "unknown topic": (
        [{"source_example_id": "x", "goal": "g", "steps": ["a"], "topic": "Gardening"}],
        [],
        "line 4, field 'topic': unknown topic 'Gardening'",
    ),
    "duplicate id": (
        [dict(EXAMPLES[1])],
        [],
        "line 4, field 'source_example_id': duplicate source_example_id 'doc-2' (first on line 2)",
    ),
    "oversize goal": (
        [{"source_example_id": "x", "goal": "g" * 2001, "steps": ["a"]}],
        [],
        "line 4, field 'goal': is too long: 2001 characters (limit 2000)",
    ),
    "invalid utf-8": (
        [],
        [b'{"source_example_id": "x", "goal": "caf\xe9", "steps": ["a"]}'],
        "line 4: invalid UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_EXAMPLE_FILES))
def test_bad_procedure_file_is_refused_whole(case, tmp_path):
    extra, raw, expected = BAD_EXAMPLE_FILES[case]
    path = write_jsonl(tmp_path / "bad.jsonl", EXAMPLES + extra, raw_lines=raw)
    with pytest.raises(CommandError) as err:
        run("import_procedures", str(path), "--dataset", "bench")
    assert expected in str(err.value)
    assert str(path) in str(err.value)
    assert not Dataset.objects.exists() and not Procedure.objects.exists()


def test_refusal_into_existing_dataset_leaves_it_unchanged(bench, tmp_path):
    before = snapshot()
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [{"source_example_id": "new", "goal": "g", "steps": ["a"]}],
        raw_lines=["{"],
    )
    with pytest.raises(CommandError, match="line 2: malformed JSON"):
        run("import_procedures", str(path), "--dataset", "bench")
    assert snapshot() == before


def test_oversize_limits_come_from_settings(settings, tmp_path):
    settings.IMPORT_LIMITS = dict(settings.IMPORT_LIMITS, steps=2)
    path = write_jsonl(tmp_path / "x.jsonl", EXAMPLES)
    with pytest.raises(
        CommandError, match=r"line 1, field 'steps': has too many items: 4 \(limit 2\)"
    ):
        run("import_procedures", str(path), "--dataset", "bench")


def test_many_errors_are_listed_at_once_and_capped(tmp_path):
    bad = [{"source_example_id": f"e{i}", "goal": "", "steps": ["a"]} for i in range(25)]
    path = write_jsonl(tmp_path / "bad.jsonl", bad)
    with pytest.raises(CommandError) as err:
        run("import_procedures", str(path), "--dataset", "bench")
    text = str(err.value)
    assert "(25 error(s))" in text
    assert "line 1, field 'goal': must not be empty" in text and "line 20, field 'goal'" in text
    assert "line 21, field 'goal'" not in text and "... and 5 more error(s)" in text


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_text("\n" + json.dumps(EXAMPLES[1]) + "\n\n   \n", encoding="utf-8")
    assert "created 1," in run("import_procedures", str(path), "--dataset", "bench")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match=r"cannot read .*nope\.jsonl"):
        run("import_procedures", str(tmp_path / "nope.jsonl"), "--dataset", "bench")
