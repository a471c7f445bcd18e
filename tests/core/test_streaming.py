"""core.streaming: JSONL and CSV line generators, the download response, file writing."""

from __future__ import annotations

import csv
import io
import json

import pytest

from core.streaming import (
    csv_cell,
    csv_lines,
    export_lines,
    jsonl_lines,
    streaming_download,
    write_lines,
)

ROWS = [
    {"id": 1, "goal": 'café, "quoted"', "steps": ["a", "b"], "meta": {"k": 1}, "note": None},
    {"id": 2, "goal": "two\nlines", "steps": [], "meta": {}, "note": "x"},
]
FIELDS = ("id", "goal", "steps", "meta", "note")


def test_jsonl_lines_one_object_a_line_unicode_kept():
    lines = list(jsonl_lines(ROWS))
    assert len(lines) == 2 and all(line.endswith("\n") for line in lines)
    assert "café" in lines[0]  # not \u00e9
    assert [json.loads(line) for line in lines] == ROWS


def test_jsonl_lines_are_lazy():
    seen = []

    def rows():
        for i in range(3):
            seen.append(i)
            yield {"i": i}

    lines = jsonl_lines(rows())
    assert seen == []
    next(lines)
    assert seen == [0]


def test_csv_cells():
    assert csv_cell(None) == ""
    assert csv_cell(["a", "é"]) == '["a", "é"]'
    assert csv_cell({"k": 1}) == '{"k": 1}'
    assert csv_cell(0) == 0 and csv_cell(False) is False and csv_cell("x") == "x"


def test_csv_lines_header_first_then_rows_that_read_back():
    lines = list(csv_lines(ROWS, FIELDS))
    assert lines[0] == "id,goal,steps,meta,note\r\n"
    back = list(csv.DictReader(io.StringIO("".join(lines))))
    assert tuple(back[0]) == FIELDS
    assert back[0]["goal"] == 'café, "quoted"' and back[1]["goal"] == "two\nlines"
    assert json.loads(back[0]["steps"]) == ["a", "b"] and json.loads(back[0]["meta"]) == {"k": 1}
    assert back[0]["note"] == "" and back[1]["note"] == "x"


def test_csv_lines_of_no_rows_is_the_header():
    assert list(csv_lines([], ("a", "b"))) == ["a,b\r\n"]


def test_export_lines_by_format():
    assert list(export_lines(ROWS, fields=FIELDS, fmt="jsonl")) == list(jsonl_lines(ROWS))
    assert list(export_lines(ROWS, fields=FIELDS, fmt="csv")) == list(csv_lines(ROWS, FIELDS))
    with pytest.raises(ValueError, match="unknown export format 'xml'"):
        export_lines(ROWS, fields=FIELDS, fmt="xml")


@pytest.mark.parametrize(
    "filename, content_type",
    [
        ("study-1-labels.jsonl", "application/x-ndjson; charset=utf-8"),
        ("study-1-labels.csv", "text/csv; charset=utf-8"),
    ],
)
def test_streaming_download(filename, content_type):
    response = streaming_download(jsonl_lines(ROWS), filename=filename)
    assert response.streaming and response["Content-Type"] == content_type
    assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
    body = b"".join(response.streaming_content).decode()
    assert [json.loads(line) for line in body.splitlines()] == ROWS


def test_streaming_download_needs_a_known_extension_or_a_content_type():
    with pytest.raises(ValueError, match="no content type known"):
        streaming_download(iter(()), filename="x.bin")
    response = streaming_download(iter(["a"]), filename="x.bin", content_type="text/plain")
    assert response["Content-Type"] == "text/plain"


def test_write_lines_to_stdout_and_to_a_file(tmp_path):
    out = io.StringIO()
    assert write_lines(jsonl_lines(ROWS), stdout=out) == 2
    assert [json.loads(line) for line in out.getvalue().splitlines()] == ROWS
    target = tmp_path / "rows.csv"
    assert write_lines(csv_lines(ROWS, FIELDS), stdout=out, output=str(target)) == 3
    assert target.read_bytes().count(b"\r\n") >= 3  # CSV line ends kept as written
    assert list(tmp_path.iterdir()) == [target]


def test_write_lines_leaves_no_half_written_file(tmp_path):
    target = tmp_path / "rows.jsonl"
    target.write_text("old\n")

    def failing():
        yield "one\n"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_lines(failing(), stdout=io.StringIO(), output=str(target))
    assert target.read_text() == "old\n" and list(tmp_path.iterdir()) == [target]
    with pytest.raises(OSError):
        write_lines(iter(["x\n"]), stdout=io.StringIO(), output=str(tmp_path / "no" / "f"))
