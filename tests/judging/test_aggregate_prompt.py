"""How2Score aggregate (pure) against the reference's definitions, and the H.3 prompt file."""

from __future__ import annotations

from judging import prompting
from judging.aggregate import how2score


def rec(topic, has_failure, n, parse_failed=False, tokens=None):
    return {
        "topic": topic,
        "has_failure": has_failure,
        "n_failures": n,
        "parse_failed": parse_failed,
        "generated_tokens": tokens,
    }


def test_how2score_excludes_parse_failures_and_counts_them():
    records = [
        rec("food", False, 0, tokens=100),
        rec("food", True, 2, tokens=200),
        rec("home", True, 1, tokens=300),
        rec("home", False, 0),
        rec("home", True, 0, parse_failed=True, tokens=400),
    ]
    summary, rows = how2score(records)
    assert summary["n_examples"] == 4
    assert summary["n_with_failures"] == 2
    assert summary["failure_rate"] == 0.5
    assert summary["how2score"] == 0.5 and summary["how2score_percent"] == 50.0
    assert summary["avg_failures_per_example"] == 0.75
    assert summary["n_parse_failed"] == 1
    assert summary["avg_generated_tokens"] == 250.0
    assert [r["topic"] for r in rows] == ["food", "home"]
    home = rows[1]
    assert home["n_judged"] == 2 and home["n_with_failures"] == 1 and home["n_parse_failed"] == 1
    assert home["how2score"] == 0.5 and home["avg_failures_per_example"] == 0.5


def test_how2score_empty():
    summary, rows = how2score([])
    assert summary["how2score"] == 0.0 and summary["n_examples"] == 0 and rows == []


def test_render_prompt_numbers_steps_and_fills_fields():
    template = prompting.load_template("judge_h3")
    prompt = prompting.render_judge_prompt(
        template=template,
        goal=" Bake bread ",
        reference_steps=["Mix.", " ", "Bake."],
        steps=["Mix", "Bake", "Eat"],
    )
    assert (
        "Goal:\nBake bread\n\nL1:\n1. Mix.\n2. Bake.\n\nL2:\n1. Mix\n2. Bake\n3. Eat\n\n# Output format"
        in prompt
    )
    assert '{\n  "reasoning": "<string>",' in prompt  # doubled braces rendered
    assert prompt.endswith("Return only valid json.")


def test_schema_and_judge_id_stability():
    assert prompting.JUDGE_SCHEMA["required"] == ["reasoning", "critical_failures"]
    a = prompting.canonical_judge_id(config={"model": "m", "decoding": {"t": 0}}, prompt_text="P")
    b = prompting.canonical_judge_id(config={"decoding": {"t": 0}, "model": "m"}, prompt_text="P")
    c = prompting.canonical_judge_id(config={"model": "m", "decoding": {"t": 0}}, prompt_text="P ")
    assert a == b != c and len(a) == 64
