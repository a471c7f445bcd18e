"""``manage.py agreement_report`` end to end: a real file, the real command, its real output."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.annotation.agreement.test_report import CSV

ROOT = Path(__file__).resolve().parents[3]


def run(*args):
    out = StringIO()
    call_command("agreement_report", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def label_csv(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


def test_json(label_csv):
    report = json.loads(
        run(
            "--input",
            str(label_csv),
            "--format",
            "json",
            "--group-by",
            "topic",
            "--bootstrap",
            "300",
            "--seed",
            "3",
        )
    )
    assert report["n_items"] == 4
    assert report["alpha"]["value"] == pytest.approx(1 - 4 / 6)
    assert report["alpha"]["ci"]["seed"] == 3 and report["alpha"]["ci"]["n_resamples"] == 300
    assert report["first_failure"]["alpha"]["value"] is not None
    assert [g["group"] for g in report["groups"]["topic"]] == ["cooking", "diy"]


def test_text(label_csv):
    text = run("--input", str(label_csv), "--format", "text")
    assert "Krippendorff's alpha (nominal): 0.333" in text
    assert "Krippendorff's alpha, first-failure location:" in text
    assert "tie on i4: has_failure 1, no_failure 1" in text


def test_json_with_undefined_statistics(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("item_id,annotator_id,label\ni1,a,yes\ni2,a,no\n")
    report = json.loads(run("--input", str(path), "--format", "json"))
    assert report["alpha"] == {"value": None, "undefined": "only one annotator"}


def test_malformed_file_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item_id,annotator_id,label\ni1,a,x\ni1,a,y\n")
    with pytest.raises(
        CommandError, match=r"bad\.csv line 3: item 'i1' is labelled twice .*lines 2 and 3"
    ):
        run("--input", str(path))


def test_missing_and_undecodable_files(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run("--input", str(tmp_path / "nope.csv"))
    path = tmp_path / "latin1.csv"
    path.write_bytes("item_id,annotator_id,label\ni1,a,caf\xe9\n".encode("latin-1"))
    with pytest.raises(CommandError, match="not UTF-8"):
        run("--input", str(path))


def test_ordinal_words_need_categories(tmp_path):
    path = tmp_path / "ord.csv"
    path.write_text("item_id,annotator_id,label\ni1,a,low\ni1,b,high\ni2,a,mid\ni2,b,mid\n")
    with pytest.raises(CommandError, match="explicit category order"):
        run("--input", str(path), "--level", "ordinal")
    report = json.loads(
        run(
            "--input",
            str(path),
            "--level",
            "ordinal",
            "--categories",
            "low,mid,high",
            "--format",
            "json",
        )
    )
    assert report["level"] == "ordinal" and report["categories"] == ["low", "mid", "high"]


def test_exit_status_and_stderr_from_a_real_process(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item_id,annotator_id,label,first_failure_step\ni1,a,x,-2\n")
    proc = subprocess.run(
        [sys.executable, "manage.py", "agreement_report", "--input", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    assert "line 2: bad first_failure_step '-2'" in proc.stderr
