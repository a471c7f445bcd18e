"""``manage.py score SCORER FILE``: the documented shapes, the summary line,
--breakdown / --option, and errors that name FILE:LINE and the field with nothing printed."""

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

GOLD = ["hhouumkd", "hhoumkd", "houmkd", "houmd", "houm", "hum", "um", "u"]
ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path, records, name="in.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def run(*args):
    out = StringIO()
    call_command("score", *[str(a) for a in args], stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_procbench_shape_and_summary(tmp_path):
    path = write(
        tmp_path,
        [
            {"id": "exact", "gold": GOLD, "prediction": GOLD},
            "",
            {"id": "six", "gold": GOLD, "prediction": GOLD[:6]},
            {"id": 3, "gold": [1, [2, 3]], "prediction": [1, [2, "3"]]},
        ],
    )
    lines = run("procbench", path)
    assert lines[:3] == [
        {"id": "exact", "pml": 8, "pa": 1.0, "sm": 1, "fm": 1},
        {"id": "six", "pml": 6, "pa": 0.75, "sm": 0, "fm": 0},
        {"id": 3, "pml": 1, "pa": 0.5, "sm": 0, "fm": 0},
    ]
    assert lines[3] == {
        "summary": {"pml": 5.0, "pa": pytest.approx(0.75), "sm": 1 / 3, "fm": 1 / 3, "n": 3}
    }


def test_countdown_shape_breakdown_and_termination(tmp_path):
    good = "trace...\n<Solution>\n48 - 44 = 4\n35 - 4 = 31\n31 - 6 = 25\n</Solution>"
    path = write(
        tmp_path,
        [
            {"id": "f5", "numbers": [44, 48, 35, 6], "target": 25, "prediction": good},
            {
                "id": "g4",
                "numbers": [30, 6, 8, 6],
                "target": 27,
                "prediction": "No feasible solution found.",
            },
        ],
    )
    assert run("longproc-countdown", path) == [
        {"id": "f5", "correct": 1},
        {"id": "g4", "correct": 0},
        {"summary": {"correct": 0.5, "n": 2}},
    ]
    with_reason = write(
        tmp_path,
        [
            {
                "id": "a",
                "numbers": [44, 48, 35, 6],
                "target": 25,
                "prediction": good,
                "finish_reason": "stop",
            },
            {
                "id": "b",
                "numbers": [44, 48, 35, 6],
                "target": 25,
                "prediction": "...",
                "finish_reason": "length",
            },
        ],
        name="term.jsonl",
    )
    lines = run("longproc-countdown", with_reason, "--breakdown")
    assert lines[0]["correct"] == 1 and lines[0]["terminated"] == 1
    assert lines[0]["breakdown"]["equations"][0] == {
        "equation": "48 - 44 = 4",
        "ok": True,
        "error": None,
    }
    assert lines[1]["breakdown"]["errors"] == ["no <Solution> block"]
    assert lines[2] == {"summary": {"correct": 0.5, "n": 2, "term": 0.5, "acc_term": 1.0}}


def test_options_change_the_flag_choice(tmp_path):
    path = write(tmp_path, [{"id": 1, "gold": GOLD, "prediction": None}])
    assert run("procbench", path)[0] == {"id": 1, "pml": 0, "pa": 0.0, "sm": 0, "fm": 0}
    with pytest.raises(CommandError, match=r"in.jsonl:1: field 'prediction': is missing or null"):
        run("procbench", path, "--option", "missing_prediction=error")
    with pytest.raises(CommandError, match="unknown option; this scorer has: missing_final"):
        run("procbench", path, "--option", "nope=1")
    with pytest.raises(CommandError, match="--option: missing_prediction must be one of"):
        run("procbench", path, "--option", "missing_prediction=maybe")


def test_bad_lines_are_named_and_nothing_is_printed(tmp_path):
    path = write(
        tmp_path,
        [
            {"id": "ok", "gold": GOLD, "prediction": GOLD},
            {"gold": GOLD, "prediction": GOLD},
            "{not json",
            {"id": "ok", "gold": GOLD, "prediction": GOLD},
            {"id": "x", "gold": "u", "prediction": GOLD},
            {"id": "y", "numbers": [1]},
            [1, 2],
            "[" * 5000 + "]" * 5000,
            {"id": "deep", "gold": [json.loads("[" * 900 + "]" * 900)], "prediction": [[]]},
        ],
    )
    out = StringIO()
    with pytest.raises(CommandError) as exc:
        call_command("score", "procbench", str(path), stdout=out)
    assert out.getvalue() == ""
    message = str(exc.value)
    assert message.startswith("8 bad line(s), nothing scored:")
    assert f"{path}:2: field 'id': is required" in message
    assert f"{path}:3: malformed JSON" in message
    assert f"{path}:4: field 'id': 'ok' already appears on line 1" in message
    assert f"{path}:5: field 'gold': must be an array of states" in message
    assert f"{path}:6: field 'gold': is required" in message
    assert f"{path}:7: expected a JSON object, got array" in message
    assert f"{path}:8: JSON nested too deeply to read" in message
    # Deep but decodable: refused either while reading or while comparing, never a traceback.
    assert any(
        line.startswith(f"{path}:9: ") and "nested too deeply" in line
        for line in message.splitlines()
    )


def test_countdown_field_errors(tmp_path):
    path = write(
        tmp_path,
        [
            {"id": 1, "numbers": [1, "2"], "target": 3, "prediction": ""},
            {"id": 2, "numbers": [1, 2], "target": True, "prediction": ""},
            {"id": 3, "numbers": [1, 2], "target": 3},
        ],
    )
    with pytest.raises(CommandError) as exc:
        run("longproc-countdown", path)
    message = str(exc.value)
    assert "in.jsonl:1: field 'numbers': must be a non-empty array of integers" in message
    assert "in.jsonl:2: field 'target': must be an integer, got boolean" in message
    assert "in.jsonl:3: field 'prediction': is required" in message


def test_unknown_scorer_missing_file_and_list(tmp_path):
    with pytest.raises(CommandError, match=r"unknown scorer 'nope'; known: .*procbench"):
        run("nope", tmp_path / "x.jsonl")
    with pytest.raises(CommandError, match="cannot read"):
        run("procbench", tmp_path / "missing.jsonl")
    out = StringIO()
    call_command("score", "--list", stdout=out)
    names = [line.split("\t")[0] for line in out.getvalue().splitlines()]
    for name in ("procbench", "longproc-countdown", "longproc-travel", "longproc-html-to-tsv"):
        assert name in names


def test_real_cli_exit_status_and_stdin(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ok = subprocess.run(
        [sys.executable, "manage.py", "score", "procbench", "-"],
        input=json.dumps({"id": "a", "gold": GOLD, "prediction": ["u"]}) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert [json.loads(x) for x in ok.stdout.splitlines()] == [
        {"id": "a", "pml": 0, "pa": 0.0, "sm": 0, "fm": 1},
        {"summary": {"pml": 0.0, "pa": 0.0, "sm": 0.0, "fm": 1.0, "n": 1}},
    ]
    bad = write(tmp_path, [{"id": "a", "gold": [], "prediction": []}])
    failed = subprocess.run(
        [sys.executable, "manage.py", "score", "procbench", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert failed.returncode != 0 and failed.stdout == ""
    assert f"{bad}:1: field 'gold': must hold at least one state" in failed.stderr
