"""``manage.py import_pack`` on PostgreSQL: items into a dataset (gold in Procedure.payload),
outputs as a generator's generations (finish_reason, token counts, structured payload), the
demo fixtures, idempotency, --update, and refusals naming line and field that write nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import Dataset, Generation, Generator, Procedure

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "packs"


def run(*args):
    out = io.StringIO()
    call_command("import_pack", *args, stdout=out)
    return out.getvalue()


def write(tmp_path, rows, name="in.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_countdown_fixture_items_and_outputs():
    text = run(
        "longproc-countdown",
        str(FIXTURES / "longproc-countdown.jsonl"),
        "--dataset",
        "countdown@v1",
        "--generator",
        "gpt-x",
    )
    assert "items of countdown@v1: created 3, unchanged 0, updated 0" in text
    assert "outputs of gpt-x: created 3" in text
    ds = Dataset.objects.get(name="countdown", version="v1")
    p = Procedure.objects.get(dataset=ds, source_example_id="countdown-f5")
    assert p.payload == {"numbers": [44, 48, 35, 6], "target": 25}
    assert p.goal == "Countdown: reach 25 from 44, 48, 35, 6"
    g = Generation.objects.get(procedure=p, generator__name="gpt-x")
    assert g.finish_reason == "stop"
    assert (g.prompt_tokens, g.completion_tokens, g.token_count) == (812, 64, 64)
    assert "<Solution>" in g.model_completion and g.payload == {}
    cut = Generation.objects.get(procedure__source_example_id="countdown-cut")
    assert cut.finish_reason == "length" and cut.prompt_tokens is None
    assert Generator.objects.get(name="gpt-x").backend == Generator.Backend.IMPORTED
    # the same file again changes nothing
    again = run(
        "longproc-countdown",
        str(FIXTURES / "longproc-countdown.jsonl"),
        "--dataset",
        "countdown",
        "--generator",
        "gpt-x",
    )
    assert "created 0, unchanged 3, updated 0" in again
    assert Generation.objects.count() == 3


@pytest.mark.parametrize("name", ["procbench", "scirecipe", "customplans"])
def test_each_fixture_imports(name):
    run(name, str(FIXTURES / f"{name}.jsonl"), "--dataset", name, "--generator", "m")
    n = len((FIXTURES / f"{name}.jsonl").read_text().splitlines())
    assert Procedure.objects.filter(dataset__name=name).count() == n
    assert Generation.objects.filter(generator__name="m").count() == n


def test_structured_outputs_land_in_the_payload():
    run("scirecipe", str(FIXTURES / "scirecipe.jsonl"), "--dataset", "sr", "--generator", "m")
    g = Generation.objects.get(procedure__source_example_id="order-swap")
    assert [s["action"] for s in g.payload["prediction"]] == [
        "harvest",
        "centrifuge",
        "lyse",
        "quantify",
    ]
    assert len(g.payload["prediction_orc"]) == 4
    assert g.predicted_steps[1] == "centrifuge | lysate | 12000 g, 10 min"  # shown as steps
    run("customplans", str(FIXTURES / "customplans.jsonl"), "--dataset", "cp2", "--generator", "m")
    fried = Generation.objects.get(procedure__source_example_id="cp-fried-rice")
    # the edits applied: step 2 (eggs) deleted, tofu inserted after step 3
    assert fried.predicted_steps == [
        "Cook rice and let it cool.",
        "Fry vegetables in oil.",
        "Add crumbled tofu.",
        "Add rice and soy sauce.",
    ]
    p = g.procedure
    assert p.steps[0] == "harvest | cells | 1500 rpm, 5 min"
    assert p.payload["gold"][0]["action"] == "harvest"
    run("customplans", str(FIXTURES / "customplans.jsonl"), "--dataset", "cp")
    cp = Procedure.objects.get(dataset__name="cp", source_example_id="cp-tea")
    assert cp.payload["hint"] == "Make it iced." and cp.steps[0] == "Boil water."
    assert not Generation.objects.filter(procedure=cp).exists()  # no --generator: items only


def test_refusals_name_line_and_field_and_write_nothing(tmp_path):
    bad = write(
        tmp_path,
        [
            {"id": "a", "gold": ["x"], "prediction": ["x"]},
            {"id": "b", "gold": "x"},
            {"id": "c", "gold": ["x"], "finish_reason": 3},
        ],
    )
    with pytest.raises(CommandError) as info:
        run("procbench", str(bad), "--dataset", "pb", "--generator", "m")
    message = str(info.value)
    assert "refused, nothing imported (2 error(s))" in message
    assert "line 2, field 'gold'" in message
    assert "line 3, field 'finish_reason': must be a string, got integer" in message
    assert not Dataset.objects.filter(name="pb").exists()
    assert not Generator.objects.exists()
    with pytest.raises(CommandError, match="unknown scorer 'nope'"):
        run("nope", str(bad), "--dataset", "pb")


def test_changed_content_needs_update(tmp_path):
    first = write(tmp_path, [{"id": "a", "gold": ["x", "y"], "prediction": ["x"]}], "a.jsonl")
    run("procbench", str(first), "--dataset", "pb", "--generator", "m")
    changed = write(tmp_path, [{"id": "a", "gold": ["x", "y"], "prediction": ["x", "y"]}])
    with pytest.raises(CommandError, match="line 1, field 'source_example_id': generator 'm'"):
        run("procbench", str(changed), "--dataset", "pb", "--generator", "m")
    assert Generation.objects.get().payload == {"prediction": ["x"]}
    text = run("procbench", str(changed), "--dataset", "pb", "--generator", "m", "--update")
    assert "outputs of m: created 0, unchanged 0, updated 1" in text
    assert Generation.objects.get().payload == {"prediction": ["x", "y"]}
