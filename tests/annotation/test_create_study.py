"""The create_study command and its known-items JSONL parser."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.known_items import KnownItemsError, parse_known_items
from annotation.models import Study
from tests.annotation.factories import make_generations


def test_parser_accepts_good_lines_and_names_bad_ones():
    good = [
        json.dumps({"source_example_id": "x", "kind": "attention", "expected_has_failure": True}),
        "",
        json.dumps(
            {
                "generation_id": 3,
                "kind": "training",
                "expected_has_failure": False,
                "explanation": "ok",
            }
        ),
    ]
    items = parse_known_items(good, source="k.jsonl")
    assert [i["line"] for i in items] == [1, 3] and items[1]["generation_id"] == 3
    bad_cases = [
        ("{nope", "k.jsonl line 1: not valid JSON"),
        (
            json.dumps({"kind": "attention", "expected_has_failure": True}),
            "exactly one of generation_id",
        ),
        (
            json.dumps({"generation_id": 1, "kind": "platinum", "expected_has_failure": True}),
            "field kind",
        ),
        (
            json.dumps({"generation_id": 1, "kind": "attention", "expected_has_failure": "yes"}),
            "expected_has_failure",
        ),
        (
            json.dumps(
                {
                    "generation_id": 1,
                    "kind": "gold",
                    "expected_has_failure": True,
                    "expected_label": {"preferred": "first"},
                }
            ),
            "k.jsonl line 1: give expected_has_failure (critical-failure studies) or "
            "expected_label",
        ),
        (
            json.dumps(
                {"generation_id": 1, "kind": "gold", "expected_label": {}, "generation_b_id": "2"}
            ),
            "k.jsonl line 1: field generation_b_id must be an integer",
        ),
    ]
    labelled = parse_known_items(
        [
            json.dumps(
                {
                    "generation_id": 1,
                    "generation_b_id": 2,
                    "kind": "attention",
                    "expected_label": {"preferred": "first"},
                    "context": {"hint": "h"},
                }
            )
        ]
    )
    assert labelled[0]["expected_label"] == {"preferred": "first"}
    assert labelled[0]["generation_b_id"] == 2 and labelled[0]["context"] == {"hint": "h"}
    assert "expected_has_failure" not in labelled[0]
    for line, needle in bad_cases:
        with pytest.raises(KnownItemsError) as exc:
            parse_known_items([line], source="k.jsonl")
        assert needle in str(exc.value)


@pytest.mark.django_db
def test_create_study_command(tmp_path, capsys):
    gens = make_generations(6)
    ds, gen = gens[0].procedure.dataset, gens[0].generator
    known = tmp_path / "known.jsonl"
    known.write_text(
        json.dumps(
            {
                "source_example_id": gens[5].procedure.source_example_id,
                "kind": "attention",
                "expected_has_failure": True,
            }
        )
        + "\n"
    )
    call_command(
        "create_study",
        name="CLI",
        dataset=f"{ds.name}@{ds.version}",
        generator=gen.name,
        limit=3,
        known_items=str(known),
        min_seconds=30,
    )
    study = Study.objects.get(name="CLI")
    assert (
        study.items.filter(kind="regular").count() == 3
        and study.items.filter(kind="attention").count() == 1
    )
    assert study.min_seconds_per_item == 30 and "/study/s/" in capsys.readouterr().out
    known.write_text(
        json.dumps(
            {"source_example_id": "missing", "kind": "attention", "expected_has_failure": True}
        )
    )
    with pytest.raises(CommandError, match="line 1: source_example_id 'missing'"):
        call_command(
            "create_study",
            name="CLI2",
            dataset=f"{ds.name}@{ds.version}",
            generator=gen.name,
            known_items=str(known),
        )
    with pytest.raises(CommandError, match="no such dataset"):
        call_command("create_study", name="X", dataset="nope", generator=gen.name)
