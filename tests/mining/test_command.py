"""``manage.py mine FILE [--stages 2,3] [--dry-run]``."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from mining.models import MiningBatch
from tests.mining.factories import doc, write_jsonl

pytestmark = pytest.mark.django_db(transaction=True)

STEPS = [
    "Preheat the oven.",
    "Mix the flour.",
    "Knead the dough.",
    "Shape the loaf.",
    "Bake the loaf.",
]


def _lines(out: StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def test_dry_run_validates_runs_heuristics_and_saves_nothing(tmp_path):
    path = tmp_path / "d.jsonl"
    write_jsonl(
        path,
        [
            doc(1),
            {"id": "p1", "topic": "Health", "goal": "G", "steps": STEPS},
            {"id": "p2", "topic": "Health", "goal": "G", "steps": STEPS[:2]},
            doc(4, topic="Nope"),
        ],
    )
    out = StringIO()
    call_command("mine", str(path), "--dry-run", stdout=out)
    lines = _lines(out)
    assert [(x["id"], x["outcome"], x["stage"]) for x in lines] == [
        ("d1", "would_send", "procedures"),
        ("p1", "would_send", "filter"),
        ("p2", "dropped", "prefilter"),
        ("d4", "invalid", "input"),
    ]
    assert lines[0]["prompt_tokens"] > 100  # the extraction prompt plus the document
    assert "too few steps: 2 < 5" in lines[2]["reason"]
    assert MiningBatch.objects.count() == 0


def test_mine_stages_2_3_refilters_mined_procedures(tmp_path, media_root, llm_server, script):
    path = tmp_path / "mined.jsonl"
    write_jsonl(
        path,
        [
            {
                "source_example": {"id": "s1", "topic": "Health", "url": "", "text": "t"},
                "final_procedure": {"goal": "Keep me", "steps": STEPS, "resources": ["oven"]},
            },
            {
                "source_example": {"id": "s2", "topic": "Health", "url": "", "text": "t"},
                "final_procedure": {"goal": "FILTERME please", "steps": STEPS, "resources": []},
            },
            {
                "source_example": {"id": "s3", "topic": "Health", "url": "", "text": "t"},
                "final_procedure": {"goal": "Too short", "steps": STEPS[:3], "resources": []},
            },
            doc(4),
        ],
    )
    out, err = StringIO(), StringIO()
    call_command(
        "mine",
        str(path),
        "--sync",  # in this process (the default is a Celery run)
        "--stages",
        "2,3",
        "--base-url",
        llm_server.base_url,
        "--model",
        "m",
        "--api-key-env",
        "",
        stdout=out,
        stderr=err,
    )
    lines = {x["id"]: x for x in _lines(out)}
    assert (
        lines["s1"]["outcome"] == "kept"
        and lines["s1"]["goal"] == "Keep me"
        and lines["s1"]["resources"] == ["oven"]
    )
    assert (lines["s2"]["outcome"], lines["s2"]["stage"]) == ("dropped", "filter")
    assert (lines["s3"]["outcome"], lines["s3"]["stage"]) == ("dropped", "prefilter")
    assert (
        lines["d4"]["outcome"] == "invalid"
        and "stage 1 (extraction) is not selected" in lines["d4"]["reason"]
    )
    assert script.calls == {"filter": 2}  # only the LLM filter was asked, only for s1 and s2
    batch = MiningBatch.objects.get()
    assert batch.status == "done" and batch.stages == [2, 3]


def test_bad_arguments_are_command_errors(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("mine", str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "d.txt"
    bad.write_text("x")
    with pytest.raises(CommandError, match="unknown file type"):
        call_command("mine", str(bad), "--dry-run")
    ok = tmp_path / "d.jsonl"
    write_jsonl(ok, [doc(1)])
    with pytest.raises(CommandError, match="stages: 9 is not a stage number"):
        call_command("mine", str(ok), "--stages", "2,9", "--dry-run")
