from __future__ import annotations

import gzip
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mining import inputs, readers


def test_jsonl_bad_lines_become_records_with_errors(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(
        b'{"id": "a", "text": "ok"}\n\n'
        b'{"id": "b", "text": "caf\xe9"}\n'
        b"[1, 2]\n"
        b'{"id": "c", "text": \n'
        b'{"id": "d", "text": "fine \xc3\xa9"}\n'
    )
    recs = list(readers.iter_records(path))
    assert [r.line for r in recs] == [1, 3, 4, 5, 6]
    assert recs[0].data == {"id": "a", "text": "ok"}
    assert recs[1].error == "line 3: invalid UTF-8 at byte 24"
    assert recs[2].error == "line 4: expected a JSON object, got list"
    assert recs[3].error.startswith("line 5: not valid JSON")
    assert recs[4].data["text"] == "fine é"


def test_jsonl_oversized_record_is_skipped_not_loaded(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"text": "x" * 5000}) + "\n" + json.dumps({"text": "y"}) + "\n")
    recs = list(readers.iter_jsonl(path, max_record_bytes=1000))
    assert recs[0].error == "line 1: record larger than 1000 bytes"
    assert recs[1].data == {"text": "y"} and recs[1].line == 2


def test_gzipped_jsonl(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write('{"text": "a"}\n{"text": "b"}\n')
    assert readers.detect_format(path.name) == "jsonl"
    assert [r.data["text"] for r in readers.iter_records(path)] == ["a", "b"]


def test_csv_invalid_utf8_and_ragged_rows(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(
        b'id,text,topic\n1,"multi\nline",Health\n2,bad \xff byte,Health\n3,x,Health,extra\n4,ok,Health\n'
    )
    recs = list(readers.iter_records(path))
    assert recs[0].data == {"id": "1", "text": "multi\nline", "topic": "Health"}
    assert recs[1].error == "line 4: invalid UTF-8 in column 'text'"
    assert recs[2].error == "line 5: more fields than the header has columns"
    assert recs[3].data["text"] == "ok"


def test_parquet_streams_in_batches(tmp_path):
    path = tmp_path / "d.parquet"
    n = 1300
    table = pa.table(
        {
            "id": [f"p{i}" for i in range(n)],
            "text": [f"doc {i}" for i in range(n)],
            "topic": ["Health"] * n,
            "extra": list(range(n)),
            "raw": [b"\xff" if i == 7 else b"ok" for i in range(n)],
        }
    )
    pq.write_table(table, path, row_group_size=400)
    it = readers.iter_parquet(path, columns=["id", "text", "topic", "raw"], batch_size=256)
    first = next(it)
    assert first.line == 1 and first.data == {
        "id": "p0",
        "text": "doc 0",
        "topic": "Health",
        "raw": "ok",
    }
    rest = list(it)
    assert len(rest) == n - 1
    assert rest[6].error == "row 8: invalid UTF-8 in column 'raw' at byte 0"


def test_unknown_extension_is_refused():
    with pytest.raises(readers.UnsupportedFormat, match="unknown file type"):
        readers.detect_format("docs.xlsx")


def test_document_truncation_is_noted():
    doc = inputs.document_from_record({"text": "a" * 50, "topic": "health"}, line=3, max_chars=10)
    assert doc.text == "a" * 10 and doc.notes == ["document truncated from 50 to 10 characters"]
    assert doc.source_id == "line-3" and doc.topic == "health" and doc.problem is None


@pytest.mark.parametrize(
    "record,problem",
    [
        ({"text": "x", "topic": "Knitting Robots"}, "unknown topic 'Knitting Robots'"),
        ({"text": "x"}, "missing field 'topic'"),
        ({"topic": "Health"}, "missing field 'text'"),
        ({"text": "  \n ", "topic": "Health"}, "empty document"),
        ({"text": "x", "topic": "Health", "goal": "G"}, "'goal' without 'steps'"),
    ],
)
def test_bad_records_carry_a_problem(record, problem):
    assert problem in inputs.document_from_record(record, line=1).problem


def test_records_with_goal_and_steps_and_export_records():
    doc = inputs.document_from_record(
        {"topic": "Food_and_Dining", "goal": "G", "steps": "a\nb"}, line=1
    )
    assert (
        doc.has_procedure
        and doc.steps == ["a", "b"]
        and doc.topic == "food-dining"
        and doc.problem is None
    )
    exported = {
        "source_example": {"id": "s1", "topic": "Health", "url": "u", "text": "t"},
        "final_procedure": {"goal": "G2", "steps": ["x", "y"], "resources": ["r"]},
    }
    doc = inputs.document_from_record(exported, line=2)
    assert (doc.source_id, doc.goal, doc.steps, doc.resources, doc.text) == (
        "s1",
        "G2",
        ["x", "y"],
        ["r"],
        "t",
    )


def test_parquet_arrow_and_zst_without_the_arrow_extra_are_refused_naming_it(tmp_path, monkeypatch):
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": ["a"]}), path)
    for name in ("pyarrow", "pyarrow.parquet", "pyarrow.ipc"):  # as in an install without it
        monkeypatch.setitem(sys.modules, name, None)
    for fmt in ("parquet", "arrow"):
        with pytest.raises(readers.UnsupportedFormat, match=r"optional extra 'arrow'"):
            list(readers.iter_records(path, fmt))
    with pytest.raises(readers.UnsupportedFormat, match=r"pip install -e '\.\[arrow\]'"):
        readers.open_decompressed(tmp_path / "c.jsonl.zst", "zst")
