"""import_generations and export_generations end to end on the database: the generator created,
tokens counted, ids matched to procedures (a dataset named where an id is ambiguous), a lossless
round trip into a fresh dataset, idempotency, --update, and refusals that write nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from benchmarks.models import Generation, Generator
from benchmarks.tokens import count_steps_tokens
from tests.benchmarks.import_export.support import (
    EXAMPLES,
    export,
    gens_for,
    run,
    snapshot,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


def test_import_generations_creates_generator_counts_tokens_and_matches_ids(bench, tmp_path):
    records = gens_for(["doc-1", "doc-2"], generator_model="org/model-8b")
    records[1]["token_count"] = 77
    path = write_jsonl(tmp_path / "g.jsonl", records)
    out = run("import_generations", str(path), "--generator", "model-8b")
    assert "created 2, unchanged 0, updated 0" in out
    gen = Generator.objects.get(name="model-8b")
    assert (gen.model, gen.backend) == ("org/model-8b", "imported")
    g1 = Generation.objects.get(generator=gen, procedure__source_example_id="doc-1")
    assert g1.token_count == count_steps_tokens(records[0]["predicted_steps"]) > 0
    assert g1.model_completion == records[0]["model_completion"]
    assert (
        Generation.objects.get(generator=gen, procedure__source_example_id="doc-2").token_count
        == 77
    )


def test_generation_round_trip_is_lossless(bench, examples_file, tmp_path):
    run(
        "import_generations",
        str(write_jsonl(tmp_path / "g.jsonl", gens_for(["doc-1", "doc-2", "doc-3"]))),
        "--generator",
        "gen-a",
    )
    first = export("export_generations", "--generator", "gen-a")
    assert len(first) == 3
    rec = first[0]
    assert rec["schema_version"] == "how2bench.generation.v1" and rec["generator_id"] == "gen-a"
    assert (rec["goal"], rec["steps"], rec["topic"]) == (
        EXAMPLES[0]["goal"],
        EXAMPLES[0]["steps"],
        "Food & Dining",
    )
    assert rec["token_count"] == count_steps_tokens(rec["predicted_steps"])
    # Into a fresh dataset: export its procedures and generations, import both, export again.
    procs = tmp_path / "procs.jsonl"
    gens = tmp_path / "gens.jsonl"
    run("export_procedures", "--dataset", "bench", "-o", str(procs))
    run("export_generations", "--generator", "gen-a", "--dataset", "bench", "-o", str(gens))
    run("import_procedures", str(procs), "--dataset", "fresh")
    out = run("import_generations", str(gens), "--generator", "gen-a", "--dataset", "fresh")
    assert "created 3," in out
    assert export("export_generations", "--generator", "gen-a", "--dataset", "fresh") == first
    assert len(export("export_generations", "--generator", "gen-a")) == 6


def test_generations_reimport_idempotent_and_update(bench, tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", gens_for(["doc-1", "doc-2"]))
    run("import_generations", str(path), "--generator", "gen-a")
    before = snapshot()
    assert "created 0, unchanged 2, updated 0" in run(
        "import_generations", str(path), "--generator", "gen-a"
    )
    assert snapshot() == before
    changed = write_jsonl(
        tmp_path / "g2.jsonl", gens_for(["doc-1", "doc-2"], completion="Different.")
    )
    with pytest.raises(CommandError) as err:
        run("import_generations", str(changed), "--generator", "gen-a")
    assert (
        "line 1, field 'source_example_id': generator 'gen-a' already has a different generation for 'doc-1'"
        in str(err.value)
    )
    assert snapshot() == before
    assert "created 0, unchanged 0, updated 2" in run(
        "import_generations", str(changed), "--generator", "gen-a", "--update"
    )
    assert (
        Generation.objects.get(procedure__source_example_id="doc-1").model_completion
        == "Different. 0"
    )


def test_unknown_example_is_refused_and_generator_not_created(bench, tmp_path):
    path = write_jsonl(tmp_path / "g.jsonl", gens_for(["doc-1", "nope", "doc-2"]))
    with pytest.raises(CommandError) as err:
        run("import_generations", str(path), "--generator", "gen-b")
    assert "line 2, field 'source_example_id': unknown example 'nope' in any dataset" in str(
        err.value
    )
    assert not Generator.objects.exists() and not Generation.objects.exists()


def test_ambiguous_example_needs_dataset(bench, examples_file, tmp_path):
    run("import_procedures", str(examples_file), "--dataset", "bench", "--version", "v2")
    path = write_jsonl(tmp_path / "g.jsonl", gens_for(["doc-1", "doc-2"]))
    with pytest.raises(CommandError) as err:
        run("import_generations", str(path), "--generator", "gen-a")
    assert (
        "line 1, field 'source_example_id': ambiguous example 'doc-1': it is in 2 datasets"
        in str(err.value)
    )
    assert not Generation.objects.exists()
    with pytest.raises(CommandError, match=r"dataset 'bench' has several versions \(v1, v2\)"):
        run("import_generations", str(path), "--generator", "gen-a", "--dataset", "bench")
    assert "created 2," in run(
        "import_generations", str(path), "--generator", "gen-a", "--dataset", "bench@v2"
    )
    assert set(Generation.objects.values_list("procedure__dataset__version", flat=True)) == {"v2"}


@pytest.mark.parametrize(
    "records, raw, expected",
    [
        (
            [{"source_example_id": "doc-1", "predicted_steps": "one step"}],
            [],
            "line 1, field 'predicted_steps': must be a list of strings",
        ),
        (
            [
                {"source_example_id": "doc-1", "predicted_steps": ["a"]},
                {"source_example_id": "doc-1", "predicted_steps": ["b"]},
            ],
            [],
            "line 2, field 'source_example_id': duplicate generation for source_example_id 'doc-1' (first on line 1)",
        ),
        (
            [{"source_example_id": "doc-1", "predicted_steps": ["a"], "token_count": -3}],
            [],
            "line 1, field 'token_count'",
        ),
        (
            [{"source_example_id": "doc-1", "predicted_steps": ["a"]}],
            [b"\xff\xfe"],
            "line 2: invalid UTF-8",
        ),
        ([], ['"just a string"'], "line 1: expected a JSON object, got string"),
    ],
)
def test_bad_generation_file_is_refused_whole(bench, tmp_path, records, raw, expected):
    before = snapshot()
    path = write_jsonl(tmp_path / "g.jsonl", records, raw_lines=raw)
    with pytest.raises(CommandError) as err:
        run("import_generations", str(path), "--generator", "gen-a")
    assert expected in str(err.value)
    assert snapshot() == before
