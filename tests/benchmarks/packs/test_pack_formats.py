"""The packs' own JSONL shapes (benchmarks.formats.packs, pure): the split into gold / output /
meta, line-numbered errors from the pack's own checks, and the stored parts rebuilding a record
that scores exactly as the line did (the shipped demo fixtures included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.formats.packs import family, pack_record, read_pack_lines
from benchmarks.packs.registry import get_pack

FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "packs"
GOLD = ["hhouumkd", "hhoumkd", "houmkd", "houmd", "houm", "hum", "um", "u"]


def read(pack, rows):
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    return read_pack_lines(lines, pack=get_pack(pack))


def test_procbench_line_splits_into_gold_output_and_meta():
    parsed = read(
        "procbench",
        [
            {
                "id": "d1",
                "goal": "DeleteChar",
                "gold": GOLD,
                "prediction": GOLD[:6],
                "finish_reason": "length",
                "prompt_tokens": 10,
                "completion_tokens": 20,
            },
            {"id": 2, "gold": [1, [2, 3]]},  # an item without an output
        ],
    )
    assert not parsed.errors
    first, second = parsed.records
    assert first.gold == {"gold": GOLD}
    assert first.output == {"prediction": GOLD[:6]}  # structured: kept in the payload
    assert first.model_completion == ""
    assert (first.finish_reason, first.prompt_tokens, first.completion_tokens) == ("length", 10, 20)
    assert first.steps == GOLD and first.goal == "DeleteChar"
    assert second.has_output is False and second.goal == "procbench item 2"
    assert second.steps == ["1", "[2, 3]"]


def test_errors_name_line_and_field_and_refuse_the_file():
    parsed = read(
        "longproc-countdown",
        [
            {"id": "ok", "numbers": [1, 2], "target": 3, "prediction": "x"},
            "not json",
            {"id": "b", "numbers": [1, "2"], "target": 3, "prediction": ""},
            {"id": "c", "numbers": [1, 2], "target": 3, "prediction": "", "prompt_tokens": -1},
            {"id": "ok", "numbers": [1, 2], "target": 3},
            [1],
        ],
    )
    assert parsed.records == []
    text = parsed.errors.lines()
    assert text[0].startswith("line 2: malformed JSON")
    assert text[1] == "line 3, field 'numbers': must be a non-empty array of integers"
    assert text[2] == "line 4, field 'prompt_tokens': must be a non-negative integer, got -1"
    assert text[3] == "line 5, field 'id': duplicate id 'ok' (first on line 1)"
    assert text[4] == "line 6: expected a JSON object, got array"


def test_gold_is_checked_even_without_an_output():
    parsed = read("procbench", [{"id": "x", "gold": []}])
    message = str(parsed.errors.errors[0])
    assert message.startswith("line 1, field 'gold': must hold at least one state")


def test_unknown_family_is_a_value_error():
    assert family("longproc-travel") == "longproc"
    with pytest.raises(ValueError, match="no import shape for pack 'nope'"):
        family("nope")


def test_raw_prediction_goes_to_model_completion_and_comes_back():
    record = pack_record(
        item_id="f5",
        gold={"numbers": [1], "target": 1},
        output={},
        model_completion="<Solution>\n</Solution>",
        finish_reason="stop",
    )
    assert record == {
        "id": "f5",
        "numbers": [1],
        "target": 1,
        "prediction": "<Solution>\n</Solution>",
        "finish_reason": "stop",
    }
    # CustomPlans: a structured output is kept; else the raw text is the edit calls
    plans = {"item_id": "a", "gold": {"steps": ["s1"]}, "pack": "customplans"}
    assert pack_record(**plans, output={"edits": []}, model_completion="t") == {
        "id": "a",
        "steps": ["s1"],
        "edits": [],
    }
    raw = pack_record(**plans, output={}, model_completion="insert(1, Then rest.)")
    assert get_pack("customplans").score(raw).breakdown["customized_steps"] == ["s1", "Then rest."]


@pytest.mark.parametrize("name", ["procbench", "scirecipe", "customplans", "longproc-countdown"])
def test_demo_fixture_lines_score_the_same_after_the_round_trip(name):
    path = FIXTURES / f"{name}.jsonl"
    pack = get_pack(name)
    raw = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    parsed = read_pack_lines(path.read_bytes().splitlines(), pack=pack)
    assert not parsed.errors and len(parsed.records) == len(raw) >= 2
    for line, rec in zip(raw, parsed.records, strict=True):
        rebuilt = pack_record(
            item_id=rec.source_example_id,
            gold=rec.gold,
            output=rec.output,
            model_completion=rec.model_completion,
            finish_reason=rec.finish_reason,
            pack=name,
        )
        assert pack.score(rebuilt).metrics == pack.score(line).metrics


def test_fixture_worked_examples():
    """The fixtures hold the notes' worked examples: ProcBench's DeleteChar table rows, the
    SciRecipe strict/LCS order examples, Countdown F.5 (correct) and G.4 (no solution)."""

    def metrics(name):
        pack = get_pack(name)
        rows = (FIXTURES / f"{name}.jsonl").read_text().splitlines()
        return {json.loads(r)["id"]: pack.score(json.loads(r)).metrics for r in rows}

    pb = metrics("procbench")
    assert (pb["deletechar-fig1-slip"]["pml"], pb["deletechar-fig1-slip"]["pa"]) == (2, 0.25)
    assert (pb["deletechar-fig1-short"]["pml"], pb["deletechar-fig1-short"]["fm"]) == (6, 0)
    sr = metrics("scirecipe")
    assert sr["order-subsequence"]["order_strict"] == 1
    assert sr["order-swap"]["order_strict"] == 0
    assert sr["order-swap"]["order_lcs"] == pytest.approx(0.75)  # L/m = 3/4, n = m
    cd = metrics("longproc-countdown")
    assert [cd[k]["correct"] for k in ("countdown-f5", "countdown-g4")] == [1, 0]
    assert cd["countdown-cut"]["terminated"] == 0
