"""The one corpus reader (mining/readers.py): file kinds, every compression,
Arrow IPC from a stream, shard globs over a listing. Pure: no database."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from mining import readers

ROWS = [{"id": f"d{i}", "text": f"doc {i}", "topic": "Health"} for i in range(3)]


def _jsonl() -> bytes:
    return "".join(json.dumps(r) + "\n" for r in ROWS).encode()


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize(
    ("suffix", "pack"),
    [
        ("", lambda b: b),
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
        (".zst", _zstd),
    ],
)
def test_jsonl_every_compression_from_a_stream(suffix, pack):
    stream = io.BytesIO(pack(_jsonl()))
    records = list(readers.iter_records(stream, name=f"shard.jsonl{suffix}"))
    assert [r.data for r in records] == ROWS and [r.line for r in records] == [1, 2, 3]


@pytest.mark.parametrize("kind", ["file", "stream"])
def test_arrow_ipc_read_from_a_stream(kind):
    table = pa.Table.from_pylist(ROWS)
    sink = io.BytesIO()
    writer = (ipc.new_file if kind == "file" else ipc.new_stream)(sink, table.schema)
    writer.write_table(table)
    writer.close()
    sink.seek(0)
    records = list(readers.iter_records(sink, name="part-0.arrow"))
    assert [r.data for r in records] == ROWS and [r.line for r in records] == [1, 2, 3]


def test_file_kind_and_its_errors_name_the_file():
    assert readers.file_kind("a/b.csv.zst") == ("csv", "zst")
    assert readers.file_kind("x.feather") == ("arrow", "none")
    assert readers.file_kind("x.lzma", default="jsonl") == ("jsonl", "xz")
    with pytest.raises(readers.UnsupportedFormat, match=r"x\.arrow\.gz: arrow files carry"):
        readers.file_kind("x.arrow.gz")
    with pytest.raises(readers.UnsupportedFormat, match=r"notes\.txt: unknown file type"):
        readers.file_kind("notes.txt")


def test_a_bad_line_names_its_line():
    data = gzip.compress(b'{"id": "a", "text": "t"}\n{not json\n')
    records = list(readers.iter_records(io.BytesIO(data), name="s.jsonl.gz"))
    assert records[0].data == {"id": "a", "text": "t"}
    assert records[1].line == 2 and records[1].error.startswith("line 2: not valid JSON")


def test_glob_matches_shards_per_directory_level(tmp_path):
    for name in ("a/part-1.jsonl.gz", "a/part-2.jsonl.gz", "a/other.csv", "b/part-3.jsonl.gz"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    root = str(tmp_path)
    assert readers.match_names(f"{root}/a/part-*.jsonl.gz", readers.local_listdir) == [
        f"{root}/a/part-1.jsonl.gz",
        f"{root}/a/part-2.jsonl.gz",
    ]
    assert readers.match_names(f"{root}/*/part-*.jsonl.gz", readers.local_listdir) == [
        f"{root}/a/part-1.jsonl.gz",
        f"{root}/a/part-2.jsonl.gz",
        f"{root}/b/part-3.jsonl.gz",
    ]
    assert readers.match_names(f"{root}/c/*.csv", readers.local_listdir) == []
    with pytest.raises(readers.UnsupportedFormat, match=r"'\*\*' is not supported"):
        readers.match_names(f"{root}/**/x.csv", readers.local_listdir)


def test_jsonl_reads_as_the_standard_library_reads_whatever_orjson_refuses():
    """orjson is the fast path; where it refuses, the line reads (or fails) as json.loads."""
    lines = [
        b'{"id": "fast", "n": 1.5, "tags": ["a", "b"]}',
        b'{"id": "nan", "score": NaN}',  # orjson refuses NaN; json reads it
        b'{"id": "big", "n": 123456789012345678901234567890}',  # past 64 bits
        b'{"id": "lone", "text": "\\ud800x"}',  # a lone surrogate escape
        b'{"id": "bad", "text": }',
        b'{"source_example": {"id": 123456789012345678901234567891, "text": "t"}}',
    ]
    records = list(readers.iter_records(io.BytesIO(b"\n".join(lines) + b"\n"), name="x.jsonl"))
    assert records[0].data == {"id": "fast", "n": 1.5, "tags": ["a", "b"]}
    assert records[1].data["id"] == "nan" and records[1].data["score"] != records[1].data["score"]
    assert records[2].data["n"] == 123456789012345678901234567890
    assert records[3].error is None and records[3].data["id"] == "lone"
    assert records[5].data["source_example"]["id"] == 123456789012345678901234567891
    with pytest.raises(json.JSONDecodeError) as stdlib:
        json.loads(lines[4].decode())
    assert records[4].error == (
        f"line 5: not valid JSON ({stdlib.value.msg} at column {stdlib.value.colno})"
    )


def test_control_characters_are_stripped_whether_escaped_or_raw():
    """The byte prefilter lets only lines without escapes, DEL or C1 lead bytes skip the scan."""
    lines = [
        b'{"id": "esc", "text": "a\\u0001b"}',
        '{"id": "c1", "text": "a\u0085b"}'.encode(),
        b'{"id": "del", "text": "a\x7fb"}',
        '{"id": "nbsp", "text": "a\u00a0b"}'.encode(),  # \xc2 lead byte, nothing to strip
    ]
    records = list(readers.iter_records(io.BytesIO(b"\n".join(lines) + b"\n"), name="x.jsonl"))
    assert [r.data["text"] for r in records] == ["ab", "ab", "ab", "a\u00a0b"]
    assert [bool(r.note) for r in records] == [True, True, True, False]
