"""The import/export commands end to end on the database: round trip, idempotency, --update,
and refusals that leave the database unchanged with messages naming line and field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import Dataset, Generation, Generator, Procedure
from benchmarks.tokens import count_steps_tokens

pytestmark = pytest.mark.django_db

EXAMPLES = [
    {
        "schema_version": "how2bench.example.v1",
        "source_example_id": "doc-1",
        "topic": "Food_and_Dining",  # WebOrganizer label: canonicalised to "Food & Dining"
        "goal": "Bake a sourdough loaf",
        "resources": ["starter", "flour", "water", "salt"],
        "steps": [
            "Feed the starter.",
            "Mix the dough.",
            "Proof overnight.",
            "Bake at 250 °C for 40 minutes.",
        ],
        "url": "https://example.test/bread",
        "source_text": "A long article about bread.\nWith lines — and unicode: café.",
    },
    {
        "source_example_id": "doc-2",
        "topic": "",
        "goal": "Reset a router",
        "resources": [],
        "steps": ["Unplug it.", "Wait.", "Plug it in."],
    },
    {
        "source_example": {
            "id": "doc-3",
            "topic": "science-math-tech",
            "url": "",
            "text": "physics notes",
        },
        "final_procedure": {
            "goal": "Measure g with a pendulum",
            "steps": ["Build a pendulum.", "Time 10 swings."],
            "resources": ["string"],
        },
    },
]


def write_jsonl(path: Path, records, *, raw_lines: list[str | bytes] = ()) -> Path:
    with open(path, "wb") as out:
        out.writelines(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)
        out.writelines(
            (line if isinstance(line, bytes) else line.encode()) + b"\n" for line in raw_lines
        )
    return path


def run(*args, **kwargs) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **kwargs)
    return out.getvalue()


def export(*args, **kwargs) -> list[dict]:
    return [json.loads(line) for line in run(*args, **kwargs).splitlines()]


def gens_for(ids, *, completion="1. Do it.", generator_model=None):
    out = []
    for i, sid in enumerate(ids):
        rec = {
            "source_example_id": sid,
            "predicted_steps": [f"Step one for {sid}.", "Step two."],
            "model_completion": f"{completion} {i}",
        }
        if generator_model:
            rec["generator"] = {"backend": "vllm", "provider": "", "model": generator_model}
        out.append(rec)
    return out


def snapshot():
    return (
        list(Dataset.objects.values_list("id", "name", "version")),
        list(
            Procedure.objects.order_by("id").values_list(
                "id", "source_example_id", "goal", "steps", "topic_id"
            )
        ),
        list(Generator.objects.values_list("id", "name")),
        list(
            Generation.objects.order_by("id").values_list(
                "id", "predicted_steps", "model_completion", "token_count"
            )
        ),
    )


@pytest.fixture
def examples_file(tmp_path):
    return write_jsonl(tmp_path / "examples.jsonl", EXAMPLES)


@pytest.fixture
def bench(examples_file):
    run("import_procedures", str(examples_file), "--dataset", "bench")
    return Dataset.objects.get(name="bench", version="v1")


# --- procedures ------------------------------------------------------------------------------------


def test_import_procedures_creates_dataset_and_reports_counts(examples_file):
    out = run("import_procedures", str(examples_file), "--dataset", "bench", "--version", "v2")
    assert "created 3, unchanged 0, updated 0" in out
    ds = Dataset.objects.get(name="bench", version="v2")
    p1 = ds.procedures.get(source_example_id="doc-1")
    assert (
        p1.topic.slug == "food-dining"
        and p1.steps == EXAMPLES[0]["steps"]
        and p1.url == EXAMPLES[0]["url"]
    )
    p3 = ds.procedures.get(source_example_id="doc-3")
    assert (p3.goal, p3.source_text, p3.topic.slug) == (
        "Measure g with a pendulum",
        "physics notes",
        "science-math-tech",
    )
    assert ds.procedures.get(source_example_id="doc-2").topic is None


def test_procedure_round_trip_is_lossless(bench, tmp_path):
    first = export("export_procedures", "--dataset", "bench")
    assert [r["source_example_id"] for r in first] == ["doc-1", "doc-2", "doc-3"]
    assert (
        first[0]["topic"] == "Food & Dining" and first[2]["topic"] == "Science, Math & Technology"
    )
    assert (
        first[2]["source_text"] == "physics notes"
        and first[0]["schema_version"] == "how2bench.example.v1"
    )
    out_file = tmp_path / "exported.jsonl"
    run("export_procedures", "--dataset", "bench", "-o", str(out_file))
    assert [json.loads(x) for x in out_file.read_text(encoding="utf-8").splitlines()] == first
    run("import_procedures", str(out_file), "--dataset", "copy")
    assert export("export_procedures", "--dataset", "copy@v1") == first


def test_reimport_is_idempotent(bench, examples_file):
    before = snapshot()
    out = run("import_procedures", str(examples_file), "--dataset", "bench")
    assert "created 0, unchanged 3, updated 0" in out
    assert snapshot() == before


def test_changed_content_is_refused_without_update_and_replaced_with_it(bench, tmp_path):
    changed = [
        dict(EXAMPLES[0], goal="Bake a rye loaf"),
        EXAMPLES[1],
        {"source_example_id": "doc-4", "goal": "New", "steps": ["One."]},
    ]
    path = write_jsonl(tmp_path / "changed.jsonl", changed)
    before = snapshot()
    with pytest.raises(CommandError) as err:
        run("import_procedures", str(path), "--dataset", "bench")
    assert (
        "line 1, field 'source_example_id': 'doc-1' is already in bench@v1 with different content"
        in str(err.value)
    )
    assert "nothing imported" in str(err.value)
    assert snapshot() == before  # doc-4 was not created either
    out = run("import_procedures", str(path), "--dataset", "bench", "--update")
    assert "created 1, unchanged 1, updated 1" in out
    assert bench.procedures.get(source_example_id="doc-1").goal == "Bake a rye loaf"
    assert bench.procedures.count() == 4  # doc-3, absent from the file, is kept


BAD_EXAMPLE_FILES = {
    "malformed json": ([], ['{"source_example_id": "x", "goal": '], "line 4: malformed JSON"),
    "non-object": ([], ["[1, 2, 3]"], "line 4: expected a JSON object, got array"),
    "missing goal": (
        [{"source_example_id": "x", "steps": ["a"]}],
        [],
        "line 4, field 'goal': is missing",
    ),
    "empty steps": (
        [{"source_example_id": "x", "goal": "g", "steps": []}],
        [],
        "line 4, field 'steps': must not be empty",
    ),
    "wrong step type": (
        [{"source_example_id": "x", "goal": "g", "steps": ["a", {"b": 1}]}],
        [],
        "line 4, field 'steps[1]': must be a string, got object",
    ),
    "unknown topic": (
        [{"source_example_id": "x", "goal": "g", "steps": ["a"], "topic": "Gardening"}],
        [],
        "line 4, field 'topic': unknown topic 'Gardening'",
    ),
    "duplicate id": (
        [dict(EXAMPLES[1])],
        [],
        "line 4, field 'source_example_id': duplicate source_example_id 'doc-2' (first on line 2)",
    ),
    "oversize goal": (
        [{"source_example_id": "x", "goal": "g" * 2001, "steps": ["a"]}],
        [],
        "line 4, field 'goal': is too long: 2001 characters (limit 2000)",
    ),
    "invalid utf-8": (
        [],
        [b'{"source_example_id": "x", "goal": "caf\xe9", "steps": ["a"]}'],
        "line 4: invalid UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_EXAMPLE_FILES))
def test_bad_procedure_file_is_refused_whole(case, tmp_path):
    extra, raw, expected = BAD_EXAMPLE_FILES[case]
    path = write_jsonl(tmp_path / "bad.jsonl", EXAMPLES + extra, raw_lines=raw)
    with pytest.raises(CommandError) as err:
        run("import_procedures", str(path), "--dataset", "bench")
    assert expected in str(err.value)
    assert str(path) in str(err.value)
    assert not Dataset.objects.exists() and not Procedure.objects.exists()


def test_refusal_into_existing_dataset_leaves_it_unchanged(bench, tmp_path):
    before = snapshot()
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [{"source_example_id": "new", "goal": "g", "steps": ["a"]}],
        raw_lines=["{"],
    )
    with pytest.raises(CommandError, match="line 2: malformed JSON"):
        run("import_procedures", str(path), "--dataset", "bench")
    assert snapshot() == before


def test_oversize_limits_come_from_settings(settings, tmp_path):
    settings.IMPORT_LIMITS = dict(settings.IMPORT_LIMITS, steps=2)
    path = write_jsonl(tmp_path / "x.jsonl", EXAMPLES)
    with pytest.raises(
        CommandError, match=r"line 1, field 'steps': has too many items: 4 \(limit 2\)"
    ):
        run("import_procedures", str(path), "--dataset", "bench")


def test_many_errors_are_listed_at_once_and_capped(tmp_path):
    bad = [{"source_example_id": f"e{i}", "goal": "", "steps": ["a"]} for i in range(25)]
    path = write_jsonl(tmp_path / "bad.jsonl", bad)
    with pytest.raises(CommandError) as err:
        run("import_procedures", str(path), "--dataset", "bench")
    text = str(err.value)
    assert "(25 error(s))" in text
    assert "line 1, field 'goal': must not be empty" in text and "line 20, field 'goal'" in text
    assert "line 21, field 'goal'" not in text and "... and 5 more error(s)" in text


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_text("\n" + json.dumps(EXAMPLES[1]) + "\n\n   \n", encoding="utf-8")
    assert "created 1," in run("import_procedures", str(path), "--dataset", "bench")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match=r"cannot read .*nope\.jsonl"):
        run("import_procedures", str(tmp_path / "nope.jsonl"), "--dataset", "bench")


# --- generations -------------------------------------------------------------------------------------


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


def test_unknown_dataset_and_generator_are_clear_errors(bench):
    with pytest.raises(CommandError, match="--dataset nope: no dataset named 'nope'"):
        run("export_procedures", "--dataset", "nope")
    with pytest.raises(CommandError, match=r"no dataset bench@v9"):
        run("export_procedures", "--dataset", "bench", "--version", "v9")
    with pytest.raises(CommandError, match="--generator: no generator named 'ghost'"):
        run("export_generations", "--generator", "ghost")


def test_services_accept_lines_and_refuse_without_writing():
    from benchmarks.services.imports import ImportRefused, generations_import, procedures_import

    lines = [json.dumps(r) for r in EXAMPLES]
    report = procedures_import(dataset="svc", lines=lines)
    assert (report.created, report.unchanged, report.updated) == (3, 0, 0)
    with pytest.raises(ImportRefused) as err:
        generations_import(
            generator="g", dataset="svc", lines=[json.dumps(gens_for(["doc-1"])[0]), "{bad"]
        )
    assert [(e.line, e.field) for e in err.value.errors] == [(2, None)] and err.value.total == 1
    assert not Generator.objects.exists()
    with pytest.raises(ValueError, match="exactly one of path= or lines="):
        procedures_import(dataset="svc", lines=lines, path="x.jsonl")


def test_overlong_names_are_refused_before_reading(examples_file):
    with pytest.raises(CommandError, match="--dataset must be 1 to 128 characters, got 129"):
        run("import_procedures", str(examples_file), "--dataset", "d" * 129)
    with pytest.raises(CommandError, match="--version must be 1 to 32 characters"):
        run("import_procedures", str(examples_file), "--dataset", "d", "--version", "v" * 33)
    with pytest.raises(CommandError, match="--generator must be 1 to 128 characters"):
        run("import_generations", str(examples_file), "--generator", "g" * 200)
    assert not Dataset.objects.exists()
