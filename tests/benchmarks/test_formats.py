"""Pure unit tests of benchmarks.formats: every validation rule, the record builders, line numbers."""

from __future__ import annotations

import json

import pytest

from benchmarks import formats
from benchmarks.formats import Limits, read_examples, read_generations
from tests.support.purity import django_imports, source_files


def ex(**overrides):
    record = {
        "source_example_id": "ex-1",
        "topic": "Food & Dining",
        "goal": "Bake bread",
        "resources": ["flour", "water"],
        "steps": ["Mix flour and water.", "Knead the dough.", "Bake it."],
    }
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not ...}


def gen(**overrides):
    record = {
        "source_example_id": "ex-1",
        "predicted_steps": ["Mix.", "Bake."],
        "model_completion": "1. Mix.\n2. Bake.",
    }
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not ...}


def lines(*records):
    return [json.dumps(r) if not isinstance(r, (str, bytes)) else r for r in records]


def messages(result):
    return [str(e) for e in result.errors.errors]


# --- examples ----------------------------------------------------------------------------------


def test_valid_example_is_parsed_stripped_and_topic_canonicalised():
    result = read_examples(
        lines(
            ex(
                goal="  Bake bread ",
                topic="Food_and_Dining",
                url="https://x.test/a",
                source_text="doc",
            )
        )
    )
    assert not result.errors
    [r] = result.records
    assert (r.line, r.source_example_id, r.topic_slug, r.goal) == (
        1,
        "ex-1",
        "food-dining",
        "Bake bread",
    )
    assert r.steps == ["Mix flour and water.", "Knead the dough.", "Bake it."]
    assert (r.url, r.source_text) == ("https://x.test/a", "doc")


def test_how2mine_export_kind_is_accepted():
    rec = {
        "source_example": {
            "id": "doc-9",
            "topic": "Health",
            "url": "https://h.test",
            "text": "source",
        },
        "final_procedure": {
            "goal": "Take a pulse",
            "steps": ["Find the wrist.", "Count beats."],
            "resources": [],
        },
    }
    [r] = read_examples(lines(rec)).records
    assert (r.source_example_id, r.topic_slug, r.goal, r.url, r.source_text) == (
        "doc-9",
        "health",
        "Take a pulse",
        "https://h.test",
        "source",
    )


def test_how2mine_export_errors_name_nested_fields():
    rec = {"source_example": {"id": "d"}, "final_procedure": {"goal": "", "steps": "x"}}
    msgs = messages(read_examples(lines(rec)))
    assert "line 1, field 'final_procedure.goal': must not be empty" in msgs
    assert any("final_procedure.steps" in m and "list of strings" in m for m in msgs)


def test_blank_lines_are_skipped_and_line_numbers_count_them():
    result = read_examples(
        ["", "   ", json.dumps(ex()), "\n", json.dumps(ex(source_example_id="ex-2", goal=""))]
    )
    assert messages(result) == ["line 5, field 'goal': must not be empty"]
    assert result.records == []  # a refused file keeps no records


def test_malformed_json_names_the_line():
    result = read_examples(lines(ex(), '{"goal": "x",'))
    [m] = messages(result)
    assert m.startswith("line 2: malformed JSON")


def test_json_nested_too_deeply_names_the_line():
    deep = "[" * 100_000 + "]" * 100_000
    result = read_examples(lines(ex(), deep))
    [m] = messages(result)
    assert m == "line 2: JSON nested too deeply to read"


@pytest.mark.parametrize(
    "value, kind", [("[1, 2]", "array"), ('"text"', "string"), ("3", "integer"), ("null", "null")]
)
def test_non_object_line(value, kind):
    assert messages(read_examples([value])) == [f"line 1: expected a JSON object, got {kind}"]


def test_invalid_utf8_names_the_line():
    good = json.dumps(ex()).encode()
    bad = b'{"source_example_id": "x", "goal": "caf\xe9"}'
    [m] = messages(read_examples([good, bad]))
    assert m.startswith("line 2: invalid UTF-8")


def test_utf8_bom_on_first_line_is_accepted():
    result = read_examples([b"\xef\xbb\xbf" + json.dumps(ex()).encode()])
    assert not result.errors and len(result.records) == 1


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"goal": ...}, "line 1, field 'goal': is missing"),
        ({"goal": "   "}, "line 1, field 'goal': must not be empty"),
        ({"goal": 5}, "line 1, field 'goal': must be a string, got integer"),
        ({"steps": ...}, "line 1, field 'steps': is missing"),
        ({"steps": []}, "line 1, field 'steps': must not be empty"),
        ({"steps": "Mix."}, "line 1, field 'steps': must be a list of strings, got string"),
        ({"steps": ["Mix.", 3]}, "line 1, field 'steps[1]': must be a string, got integer"),
        ({"steps": ["Mix.", " "]}, "line 1, field 'steps[1]': must not be empty"),
        (
            {"resources": {"a": 1}},
            "line 1, field 'resources': must be a list of strings, got object",
        ),
        ({"resources": ["ok", None]}, "line 1, field 'resources[1]': must be a string, got null"),
        ({"source_example_id": ...}, "line 1, field 'source_example_id': is missing"),
        ({"source_example_id": ""}, "line 1, field 'source_example_id': must not be empty"),
        (
            {"source_example_id": 1.5},
            "line 1, field 'source_example_id': must be a string, got number",
        ),
        ({"url": 7}, "line 1, field 'url': must be a string, got integer"),
        ({"source_text": ["a"]}, "line 1, field 'source_text': must be a string, got array"),
        ({"topic": 3}, "line 1, field 'topic': must be a string, got integer"),
        (
            {"schema_version": "how2bench.generation.v1"},
            "line 1, field 'schema_version': expected 'how2bench.example.v1', got 'how2bench.generation.v1'",
        ),
    ],
)
def test_example_field_rules(overrides, expected):
    result = read_examples(lines(ex(**overrides)))
    assert messages(result) == [expected]


def test_integer_ids_are_accepted_as_strings():
    [r] = read_examples(lines(ex(source_example_id=42))).records
    assert r.source_example_id == "42"


def test_unknown_topic_is_refused_and_empty_topic_is_none():
    [m] = messages(read_examples(lines(ex(topic="Cooking"))))
    assert m.startswith("line 1, field 'topic': unknown topic 'Cooking'")
    [r] = read_examples(lines(ex(topic=""))).records
    assert r.topic_slug is None


def test_duplicate_source_example_id_names_both_lines():
    result = read_examples(lines(ex(), ex(source_example_id="ex-2"), ex()))
    assert messages(result) == [
        "line 3, field 'source_example_id': duplicate source_example_id 'ex-1' (first on line 1)"
    ]


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"goal": "g" * 11}, "field 'goal': is too long: 11 characters (limit 10)"),
        ({"steps": ["s" * 11]}, "field 'steps[0]': is too long: 11 characters (limit 10)"),
        ({"steps": ["a"] * 4}, "field 'steps': has too many items: 4 (limit 3)"),
        ({"resources": ["r" * 11]}, "field 'resources[0]': is too long"),
        ({"resources": ["a"] * 4}, "field 'resources': has too many items: 4 (limit 3)"),
        ({"source_text": "t" * 21}, "field 'source_text': is too long: 21 characters (limit 20)"),
        ({"url": "u" * 21}, "field 'url': is too long"),
        ({"source_example_id": "i" * 11}, "field 'source_example_id': is too long"),
    ],
)
def test_oversize_fields(overrides, expected):
    limits = Limits(
        goal=10, step=10, steps=3, resource=10, resources=3, source_text=20, url=20, id=10
    )
    base = ex(goal="Bake", steps=["Mix.", "Bake."], resources=["flour"], source_example_id="e1")
    base.update(overrides)
    [m] = messages(read_examples(lines(base), limits=limits))
    assert expected in m and m.startswith("line 1")


def test_several_errors_are_reported_at_once_and_capped():
    bad = [json.dumps(ex(source_example_id=f"e{i}", goal="")) for i in range(30)]
    result = read_examples(bad, max_errors=20)
    assert result.errors.total == 30
    assert len(result.errors.errors) == 20
    assert result.errors.lines()[-1] == "... and 10 more error(s)"
    assert result.errors.errors[19].line == 20


def test_one_line_with_several_problems_reports_each():
    msgs = messages(read_examples(lines(ex(goal="", steps=[1], topic="Nope"))))
    assert len(msgs) == 3
    assert {m.split("'")[1] for m in msgs} == {"goal", "steps[0]", "topic"}


def test_limits_from_settings_mapping_ignores_unknown_keys():
    limits = Limits.from_mapping({"goal": 7, "unknown": 3})
    assert limits.goal == 7 and limits.step == Limits().step


# --- generations --------------------------------------------------------------------------------


def test_valid_generation_with_reference_fields():
    rec = gen(
        schema_version="how2bench.generation.v1",
        generator_id="gpt-x__abc",
        goal="Bake bread",
        steps=["a"],
        resources=[],
        topic="Food & Dining",
        prompt="...",
        generation_prompt_sha256="abc",
        generator={"backend": "vllm", "provider": "", "model": "org/model-8b"},
    )
    [r] = read_generations(lines(rec)).records
    assert (
        r.source_example_id,
        r.predicted_steps,
        r.generator_id,
        r.generator_model,
        r.token_count,
    ) == ("ex-1", ["Mix.", "Bake."], "gpt-x__abc", "org/model-8b", None)
    assert r.model_completion == "1. Mix.\n2. Bake."


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"predicted_steps": ...}, "field 'predicted_steps': is missing"),
        ({"predicted_steps": []}, "field 'predicted_steps': must not be empty"),
        ({"predicted_steps": [1]}, "field 'predicted_steps[0]': must be a string, got integer"),
        ({"model_completion": 3}, "field 'model_completion': must be a string, got integer"),
        ({"token_count": -1}, "field 'token_count': must be a non-negative integer"),
        ({"token_count": "12"}, "field 'token_count': must be a non-negative integer"),
        ({"generator": "gpt"}, "field 'generator': must be an object, got string"),
        ({"source_example_id": ...}, "field 'source_example_id': is missing"),
        ({"steps": "x"}, "field 'steps': must be a list of strings"),
        (
            {"schema_version": "how2bench.example.v1"},
            "field 'schema_version': expected 'how2bench.generation.v1'",
        ),
    ],
)
def test_generation_field_rules(overrides, expected):
    [m] = messages(read_generations(lines(gen(**overrides))))
    assert m.startswith("line 1, ") and expected in m


def test_oversize_completion():
    [m] = messages(
        read_generations(lines(gen(model_completion="c" * 30)), limits=Limits(completion=20))
    )
    assert m == "line 1, field 'model_completion': is too long: 30 characters (limit 20)"


def test_duplicate_generation_for_one_example():
    result = read_generations(lines(gen(), gen(source_example_id="ex-2"), gen()))
    assert messages(result) == [
        "line 3, field 'source_example_id': duplicate generation for source_example_id 'ex-1' (first on line 1)"
    ]


def test_match_generations_unknown_and_ambiguous():
    records = read_generations(
        lines(gen(), gen(source_example_id="ex-2"), gen(source_example_id="ex-3"))
    ).records
    matched, errors = formats.match_generations(
        records, {"ex-1": [10], "ex-2": [11, 12]}, where="any dataset"
    )
    assert matched == {1: 10}
    assert [str(e) for e in errors] == [
        (
            "line 2, field 'source_example_id': ambiguous example 'ex-2': it is in 2 datasets "
            "(choose one with --dataset NAME[@VERSION])"
        ),
        "line 3, field 'source_example_id': unknown example 'ex-3' in any dataset",
    ]


def test_fill_token_counts_keeps_given_counts():
    records = read_generations(lines(gen(token_count=99), gen(source_example_id="ex-2"))).records
    filled = formats.fill_token_counts(records, lambda steps: 1000 + len(steps))
    assert [r.token_count for r in filled] == [99, 1002]


# --- export builders and helpers ---------------------------------------------------------------


def test_example_record_round_trips_through_the_parser():
    out = formats.example_record(
        source_example_id="e",
        topic_slug="science-math-tech",
        goal="g",
        resources=["r"],
        steps=["s"],
        url="",
        source_text="t",
    )
    assert (
        out["schema_version"] == "how2bench.example.v1"
        and out["topic"] == "Science, Math & Technology"
    )
    [r] = read_examples([formats.dumps_line(out)]).records
    again = formats.example_record(
        source_example_id=r.source_example_id,
        topic_slug=r.topic_slug,
        goal=r.goal,
        resources=r.resources,
        steps=r.steps,
        url=r.url,
        source_text=r.source_text,
    )
    assert again == out


def test_generation_record_carries_procedure_and_generator_id():
    out = formats.generation_record(
        generator_name="g1",
        generator_backend="imported",
        generator_model="m",
        source_example_id="e",
        topic_slug=None,
        goal="goal",
        steps=["s"],
        resources=[],
        model_completion="c",
        predicted_steps=["p"],
        token_count=3,
    )
    assert out["generator_id"] == "g1" and out["goal"] == "goal" and out["topic"] == ""
    assert out["generator"] == {"backend": "imported", "provider": "", "model": "m"}
    [r] = read_generations([formats.dumps_line(out)]).records
    assert (r.token_count, r.predicted_steps, r.generator_id) == (3, ["p"], "g1")


def test_dumps_line_keeps_unicode():
    assert formats.dumps_line({"goal": "café"}) == '{"goal": "café"}\n'


def test_formats_has_no_django_imports():
    files = [p.name for p in source_files(formats)]
    assert {"common.py", "examples.py", "generations.py"} <= set(files)
    assert django_imports(formats) == {}
