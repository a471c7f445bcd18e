"""finish_reason and token counts through the how2bench generation format: imported when given,
kept when a later file omits them, exported, refused with the field named when malformed, and
shown by the generations API."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import Generation

pytestmark = pytest.mark.django_db


def write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def dataset(tmp_path):
    path = write(
        tmp_path,
        "p.jsonl",
        [{"source_example_id": "a", "goal": "G", "steps": ["s1", "s2"], "resources": []}],
    )
    call_command("import_procedures", path, dataset="ds", stdout=io.StringIO())


def gen_row(**extra):
    return {"source_example_id": "a", "predicted_steps": ["x", "y"], "model_completion": "x\ny"} | (
        extra
    )


def test_usage_fields_import_keep_export_and_refuse(tmp_path, dataset, client, make_user):
    full = write(
        tmp_path,
        "g.jsonl",
        [gen_row(finish_reason="length", prompt_tokens=120, completion_tokens=7)],
    )
    call_command("import_generations", full, generator="m", dataset="ds", stdout=io.StringIO())
    g = Generation.objects.get()
    assert (g.finish_reason, g.prompt_tokens, g.completion_tokens) == ("length", 120, 7)
    # a file without them: unchanged, nothing cleared
    bare = write(tmp_path, "bare.jsonl", [gen_row()])
    out = io.StringIO()
    call_command("import_generations", bare, generator="m", dataset="ds", stdout=out)
    assert "created 0, unchanged 1, updated 0" in out.getvalue()
    g.refresh_from_db()
    assert g.finish_reason == "length" and g.prompt_tokens == 120
    # a different finish_reason is a change that needs --update
    other = write(tmp_path, "o.jsonl", [gen_row(finish_reason="stop")])
    with pytest.raises(CommandError, match="line 1, field 'source_example_id'"):
        call_command("import_generations", other, generator="m", dataset="ds", stdout=out)
    call_command("import_generations", other, generator="m", dataset="ds", update=True, stdout=out)
    g.refresh_from_db()
    assert (g.finish_reason, g.prompt_tokens) == ("stop", 120)
    exported = io.StringIO()
    call_command("export_generations", generator="m", stdout=exported)
    record = json.loads(exported.getvalue().splitlines()[0])
    assert (record["finish_reason"], record["prompt_tokens"], record["completion_tokens"]) == (
        "stop",
        120,
        7,
    )
    bad = write(tmp_path, "bad.jsonl", [gen_row(prompt_tokens=-3, finish_reason=5)])
    with pytest.raises(CommandError) as info:
        call_command("import_generations", bad, generator="m2", dataset="ds", stdout=out)
    assert "line 1, field 'prompt_tokens': must be a non-negative integer, got -3" in str(
        info.value
    )
    assert "line 1, field 'finish_reason': must be a string" in str(info.value)
    client.force_login(make_user("res", role="researcher", staff=True))
    body = client.get(f"/api/generations/{g.pk}/").json()
    assert (body["finish_reason"], body["prompt_tokens"], body["completion_tokens"]) == (
        "stop",
        120,
        7,
    )
    assert body["pack_scores"] == {} and body["payload"] == {}
