"""Control characters in imported files: NUL and other control characters in imported records are stripped,
each cleaned line named (procedures and generations JSONL through the CLI, mining JSONL, CSV and
Parquet), and known-answer items refuse them naming the line; PostgreSQL never sees a NUL."""

from __future__ import annotations

import json
from io import StringIO

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.known_items import KnownItemsError, parse_known_items
from benchmarks.models import Generation, Generator, Procedure
from mining.readers import iter_records

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def write(path, records):
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    return path


def test_procedures_and_generations_imports_strip_and_name_the_line(tmp_path):
    procedures = [
        {"source_example_id": "a", "goal": "Boil an egg", "steps": ["Boil water.", "Add egg."]},
        {"source_example_id": "b", "goal": "Fry\x00 an egg", "steps": ["Heat\x07 pan.", "Fry."]},
    ]
    out = run("import_procedures", str(write(tmp_path / "p.jsonl", procedures)), "--dataset", "d")
    assert "line 2: removed 2 control character(s)" in out and "line 1:" not in out
    assert Procedure.objects.get(source_example_id="b").goal == "Fry an egg"
    assert Procedure.objects.get(source_example_id="b").steps == ["Heat pan.", "Fry."]
    gens = [
        {"source_example_id": "a", "predicted_steps": ["Boil.", "Eat."]},
        {
            "source_example_id": "b",
            "predicted_steps": ["Heat.", "Fry.\x00"],
            "model_completion": "\x1bx",
        },
    ]
    out = run(
        "import_generations",
        str(write(tmp_path / "g.jsonl", gens)),
        "--generator",
        "gen",
        "--dataset",
        "d",
    )
    assert "line 2: removed 2 control character(s)" in out
    g = Generation.objects.get(
        generator=Generator.objects.get(name="gen"), procedure__source_example_id="b"
    )
    assert g.predicted_steps == ["Heat.", "Fry."]


def test_mining_readers_strip_and_name_the_line(tmp_path):
    jsonl = write(tmp_path / "d.jsonl", [{"text": "ok"}, {"text": "bad\x00text", "topic": "t\x01"}])
    records = list(iter_records(jsonl))
    assert records[0].note is None and records[1].data == {"text": "badtext", "topic": "t"}
    assert records[1].note == "line 2: removed 2 control character(s) (NUL or similar)"
    csv_path = tmp_path / "d.csv"
    csv_path.write_text('text,topic\nfine,t\n"nul\x00here",t\n', encoding="utf-8")
    records = list(iter_records(csv_path))
    assert records[1].data["text"] == "nulhere" and records[1].note.startswith("line 3: removed 1")
    table = pa.table({"text": ["fine", "x\x00y"], "topic": ["t", "t"]})
    pq.write_table(table, tmp_path / "d.parquet")
    records = list(iter_records(tmp_path / "d.parquet"))
    assert records[1].data["text"] == "xy" and records[1].note.startswith("row 2: removed 1")


def test_known_items_refuse_control_characters_naming_the_line():
    lines = [
        json.dumps({"generation_id": 1, "kind": "attention", "expected_has_failure": True}),
        json.dumps(
            {
                "generation_id": 2,
                "kind": "training",
                "expected_has_failure": True,
                "explanation": "a\x00b",
            }
        ),
    ]
    with pytest.raises(
        KnownItemsError, match=r"items\.jsonl line 2: explanation: contains a control"
    ):
        parse_known_items(lines, source="items.jsonl")


def test_judgments_import_strips_and_names_the_line(tmp_path):
    from judging.models import Judgment
    from tests.judging.factories import make_data, record, write

    make_data(n=2, generators=("gen-a",))
    records = [
        record("ex-00000"),
        record("ex-00001", reasoning="bad\x00reason", failures=["f\x1b"]),
    ]
    out = run(
        "import_judgments", write(tmp_path, records), "--judge", "imp", "--generator", "gen-a"
    )
    assert "line 2: removed 2 control character(s)" in out and "line 1:" not in out
    j = Judgment.objects.get(source_example_id="ex-00001")
    assert j.reasoning == "badreason" and j.critical_failures[0]["failure"] == "f"
