"""Inputs: every format and compression, a directory with include_globs, both record kinds,
and errors naming the file, the line and the field."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from judging.bench.inputs import InputsError, load_examples
from judging.bench.spec import Inputs

RECORDS = [
    {
        "source_example_id": "a1",
        "topic": "Food & Dining",
        "goal": "Make tea.",
        "steps": ["Boil water.", "Steep the leaves."],
        "resources": ["kettle", "tea"],
    },
    {
        "id": 7,  # ids may be numbers, and `id` stands in for source_example_id
        "topic": "Sailing",  # a topic outside the 14 is kept as the data gives it
        "goal": " Tie a bowline. ",
        "steps": ["Make a loop.", "  ", "Pass the end through."],
        "resources": [],
    },
]
EXPECTED = [
    ("a1", "Food & Dining", "Make tea.", ["Boil water.", "Steep the leaves."], ["kettle", "tea"]),
    ("7", "Sailing", "Tie a bowline.", ["Make a loop.", "Pass the end through."], []),
]


def _jsonl_bytes(records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _csv_bytes(records) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=["id", "source_example_id", "topic", "goal", "steps", "resources"]
    )
    writer.writeheader()
    for r in records:
        writer.writerow(
            {
                **{k: r.get(k, "") for k in ("id", "source_example_id", "topic", "goal")},
                "steps": json.dumps(r["steps"]),
                "resources": json.dumps(r["resources"]),
            }
        )
    return out.getvalue().encode()


def _compress(data: bytes, comp: str) -> bytes:
    if comp == "gz":
        return gzip.compress(data)
    if comp == "bz2":
        return bz2.compress(data)
    if comp == "xz":
        return lzma.compress(data)
    if comp == "zst":
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as stream:
            stream.write(data)
        return sink.getvalue().to_pybytes()
    return data


def _table(records) -> pa.Table:
    rows = [
        {**r, "id": str(r.get("id", "")), "source_example_id": r.get("source_example_id", "")}
        for r in records
    ]
    return pa.Table.from_pylist(rows)


def _tuples(examples):
    return [(e.source_example_id, e.topic, e.goal, e.steps, e.resources) for e in examples]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("comp", ["none", "gz", "zst", "bz2", "xz"])
def test_text_formats_plain_and_compressed(tmp_path, fmt, comp):
    data = _jsonl_bytes(RECORDS) if fmt == "jsonl" else _csv_bytes(RECORDS)
    suffix = f".{fmt}" + ("" if comp == "none" else f".{comp}")
    path = tmp_path / f"bench{suffix}"
    path.write_bytes(_compress(data, comp))
    assert _tuples(load_examples(Inputs(path=path))) == EXPECTED


def test_parquet_and_arrow_file_and_stream(tmp_path):
    table = _table(RECORDS)
    pq.write_table(table, tmp_path / "b.parquet")
    with pa.OSFile(str(tmp_path / "b.arrow"), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    with (
        pa.OSFile(str(tmp_path / "s.arrow"), "wb") as sink,
        ipc.new_stream(sink, table.schema) as w,
    ):
        w.write_table(table)
    for name in ("b.parquet", "b.arrow", "s.arrow"):
        assert _tuples(load_examples(Inputs(path=tmp_path / name))) == EXPECTED, name


def test_format_and_compression_from_the_config_override_the_suffix(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(gzip.compress(_jsonl_bytes(RECORDS)))
    assert _tuples(load_examples(Inputs(path=path, format="jsonl", compression="gz"))) == EXPECTED


def test_directory_with_include_globs_reads_only_matching_files_in_order(tmp_path):
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(_jsonl_bytes(RECORDS[1:])))
    (tmp_path / "a.jsonl").write_bytes(_jsonl_bytes(RECORDS[:1]))
    (tmp_path / "notes.txt").write_text("not an input")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.jsonl").write_bytes(
        _jsonl_bytes([{**RECORDS[0], "source_example_id": "deep"}])
    )
    examples = load_examples(Inputs(path=tmp_path, include_globs=("*.jsonl", "*.jsonl.gz")))
    assert _tuples(examples) == EXPECTED  # not recursive: sub/c.jsonl is not read
    with pytest.raises(InputsError, match=r"inputs.include_globs: .* is a directory"):
        load_examples(Inputs(path=tmp_path))
    with pytest.raises(InputsError, match=r"matched no file"):
        load_examples(Inputs(path=tmp_path, include_globs=("*.csv",)))


def test_how2mine_export_kind(tmp_path):
    rec = {
        "source_example": {"id": "doc-1", "topic": "Health", "url": "https://x.org/a", "text": "t"},
        "final_procedure": {
            "goal": "Rest.",
            "steps": ["Lie down.", "Sleep."],
            "resources": ["bed"],
        },
    }
    path = tmp_path / "export.jsonl"
    path.write_bytes(_jsonl_bytes([rec]))
    for kind in ("auto", "how2mine_export"):
        [e] = load_examples(Inputs(path=path, kind=kind))
        assert (e.source_example_id, e.topic, e.goal, e.steps, e.resources, e.url) == (
            "doc-1",
            "Health",
            "Rest.",
            ["Lie down.", "Sleep."],
            ["bed"],
            "https://x.org/a",
        )
    with pytest.raises(InputsError, match=r"export.jsonl:1: goal: is missing"):
        load_examples(Inputs(path=path, kind="bench"))


def test_bad_records_are_named_by_file_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(RECORDS[0]),
                "{not json",
                json.dumps({"source_example_id": "b", "goal": "", "steps": ["x"]}),
                json.dumps({"source_example_id": "c", "goal": "g", "steps": "one step"}),
                json.dumps(RECORDS[0]),
                "[1, 2]",
            ]
        )
    )
    with pytest.raises(InputsError) as exc:
        load_examples(Inputs(path=path))
    lines = exc.value.lines
    assert lines[0].startswith(f"{path}:2: malformed JSON")
    assert f"{path}:3: goal: is missing or empty" in lines
    assert any(line.startswith(f"{path}:4: steps: must be a list") for line in lines)
    assert f"{path}:5: source_example_id: 'a1' repeats {path}:1" in lines
    assert f"{path}:6: expected a JSON object, got list" in lines


def test_unreadable_compressed_file_and_missing_path(tmp_path):
    path = tmp_path / "broken.jsonl.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(InputsError, match=r"broken.jsonl.gz: cannot be read as jsonl \(gz\)"):
        load_examples(Inputs(path=path))
    with pytest.raises(InputsError, match=r"inputs.path: .*nope.jsonl: no such file"):
        load_examples(Inputs(path=Path(tmp_path / "nope.jsonl")))
    pq_path = tmp_path / "x.parquet.gz"
    pq_path.write_bytes(b"")
    with pytest.raises(InputsError, match=r"parquet files carry their own compression"):
        load_examples(Inputs(path=pq_path))
