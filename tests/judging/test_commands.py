"""import_judgments and how2score_report."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import Judge, JudgeRunItem, Judgment
from tests.judging.factories import make_data, record, write

pytestmark = pytest.mark.django_db


def test_import_then_report_json(tmp_path):
    make_data(n=4, generators=("gen-a",))
    path = write(
        tmp_path,
        [
            record("ex-00000", ["f1", "f2"]),
            record("ex-00001"),
            record("ex-00002"),
            record("ex-00003", parse_failed=True),
        ],
    )
    out = StringIO()
    call_command("import_judgments", path, "--judge", "gpt41", "--generator", "gen-a", stdout=out)
    assert "created 4, unchanged 0" in out.getvalue()
    judge = Judge.objects.get(name="gpt41")
    assert judge.backend == "imported" and judge.model == "gpt-4.1"
    assert Judgment.objects.filter(judge=judge).count() == 4

    out = StringIO()
    call_command("import_judgments", path, "--judge", "gpt41", "--generator", "gen-a", stdout=out)
    assert "created 0, unchanged 4" in out.getvalue()  # idempotent
    assert Judgment.objects.count() == 4 and JudgeRunItem.objects.count() == 4

    out = StringIO()
    call_command(
        "how2score_report",
        "--judge",
        "gpt41",
        "--generator",
        "gen-a",
        "--format",
        "json",
        stdout=out,
    )
    report = json.loads(out.getvalue())
    g = report["generators"][0]
    assert g["generator"] == "gen-a"
    assert {k: g[k] for k in ("n_examples", "n_with_failures", "n_parse_failed")} == {
        "n_examples": 3,
        "n_with_failures": 1,
        "n_parse_failed": 1,
    }
    assert g["how2score"] == pytest.approx(2 / 3) and g["failure_rate"] == pytest.approx(1 / 3)
    assert g["avg_failures_per_example"] == pytest.approx(2 / 3)
    assert set(g["by_topic"][0]) >= {
        "topic",
        "n_judged",
        "n_with_failures",
        "how2score",
        "failure_rate",
        "avg_failures_per_example",
        "n_parse_failed",
    }
    text = StringIO()
    call_command("how2score_report", "--judge", "gpt41", stdout=text)
    assert "gen-a: How2Score 66.7%" in text.getvalue()


def test_bad_file_refused_whole_with_line_and_field(tmp_path):
    make_data(n=3, generators=("gen-a",))
    path = write(
        tmp_path,
        [
            record("ex-00000"),
            "{not json",
            record("ex-00001", n_failures=3),
            record(
                "ex-00002",
                critical_failures=[{"failure": "x", "L1_steps": ["one"], "L2_steps": []}],
                n_failures=1,
                has_failure=True,
            ),
            record("ex-09999"),
            record("ex-00000"),
        ],
    )
    with pytest.raises(CommandError) as info:
        call_command("import_judgments", path, "--judge", "j", "--generator", "gen-a")
    msg = str(info.value)
    assert "refused, nothing imported" in msg
    assert "line 2: malformed JSON" in msg
    assert "line 3, field 'n_failures': is 3 but critical_failures holds 0" in msg
    assert "line 4, field 'critical_failures[0].L1_steps'" in msg
    assert (
        "line 5, field 'source_example_id': no generation of generator 'gen-a' for 'ex-09999'"
        in msg
    )
    assert "line 6, field 'source_example_id': 'ex-00000' already given on line 1" in msg
    assert Judgment.objects.count() == 0 and not Judge.objects.filter(name="j").exists()


def test_conflicting_reimport_and_wrong_names(tmp_path):
    make_data(n=2, generators=("gen-a",))
    call_command(
        "import_judgments",
        write(tmp_path, [record("ex-00000")]),
        "--judge",
        "j",
        "--generator",
        "gen-a",
    )
    with pytest.raises(CommandError, match="already holds a different verdict"):
        call_command(
            "import_judgments",
            write(tmp_path, [record("ex-00000", ["new"])], "b.jsonl"),
            "--judge",
            "j",
            "--generator",
            "gen-a",
        )
    with pytest.raises(CommandError, match="no generator named 'nope'"):
        call_command(
            "import_judgments",
            write(tmp_path, [record("ex-00000")]),
            "--judge",
            "j",
            "--generator",
            "nope",
        )
    with pytest.raises(CommandError, match="no judge named"):
        call_command("how2score_report", "--judge", "absent")
    with pytest.raises(CommandError, match="no dataset named 'nods'"):
        call_command(
            "import_judgments",
            write(tmp_path, [record("ex-00000")]),
            "--judge",
            "j",
            "--generator",
            "gen-a",
            "--dataset",
            "nods",
        )
