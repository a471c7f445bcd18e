"""The judge output parser (pure)."""

from __future__ import annotations

import json

import pytest

from judging.parsing import parse_judge_output

GOOD = {
    "reasoning": "L2 skips soaking.",
    "critical_failures": [{"failure": "No soaking", "L1_steps": [1], "L2_steps": [2]}],
}


def test_plain_json():
    r = parse_judge_output(json.dumps(GOOD), n_l1=5, n_l2=5, profile="lenient")
    assert not r.parse_failed
    assert r.reasoning == "L2 skips soaking."
    assert r.critical_failures == [{"failure": "No soaking", "L1_steps": [1], "L2_steps": [2]}]
    assert r.has_failure and r.n_failures == 1


def test_empty_failures_list():
    r = parse_judge_output('{"reasoning": "fine", "critical_failures": []}', profile="lenient")
    assert not r.parse_failed and not r.has_failure and r.n_failures == 0


@pytest.mark.parametrize(
    "wrapped",
    [
        "```json\n" + json.dumps(GOOD) + "\n```",
        "```\n" + json.dumps(GOOD) + "\n```",
        "<think>Let me think {about} it</think>\n" + json.dumps(GOOD),
        "I reasoned a lot about {goal}.\n</think>\n" + json.dumps(GOOD),
        "Here is my verdict:\n" + json.dumps(GOOD) + "\nHope this helps!",
        "<think>x</think>Sure. ```json\n" + json.dumps(GOOD, indent=2) + "\n``` done",
    ],
)
def test_wrappers(wrapped):
    r = parse_judge_output(wrapped, n_l1=5, n_l2=5, profile="lenient")
    assert not r.parse_failed, r.error
    assert r.critical_failures[0]["failure"] == "No soaking"


def test_step_numbers_out_of_range_are_dropped_with_a_warning():
    out = {
        "reasoning": "",
        "critical_failures": [{"failure": "f", "L1_steps": [0, 2, 9], "L2_steps": ["3", 3]}],
    }
    r = parse_judge_output(json.dumps(out), n_l1=4, n_l2=3, profile="lenient")
    assert not r.parse_failed
    assert r.critical_failures[0]["L1_steps"] == [2]
    assert r.critical_failures[0]["L2_steps"] == [3]
    assert len(r.warnings) == 2 and "step 9 out of range 1..4" in r.warnings[1]


def test_single_int_and_digit_strings_coerced():
    out = {
        "reasoning": "",
        "critical_failures": [{"failure": "f", "L1_steps": 2, "L2_steps": ["1"]}],
    }
    r = parse_judge_output(json.dumps(out), profile="lenient")
    assert r.critical_failures[0]["L1_steps"] == [2] and r.critical_failures[0]["L2_steps"] == [1]


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "empty output"),
        ("no json here at all", "no JSON object found"),
        ('{"reasoning": "x", "critical_failures": [', "no JSON object found"),
        ('{"reasoning": "x"}', "missing field 'critical_failures'"),
        ('{"reasoning": "x", "critical_failures": "none"}', "'critical_failures' must be a list"),
        ('{"reasoning": 5, "critical_failures": []}', "'reasoning' must be a string"),
        (
            '{"reasoning": "", "critical_failures": ["bad"]}',
            "critical_failures[0] must be an object",
        ),
        (
            '{"reasoning": "", "critical_failures": [{"failure": 3}]}',
            "critical_failures[0].failure must be a non-empty string",
        ),
        (
            '{"reasoning": "", "critical_failures": [{"failure": "f", "L1_steps": ["two"]}]}',
            "L1_steps holds 'two'",
        ),
        (
            '{"reasoning": "", "critical_failures": [{"failure": "f", "L2_steps": [true]}]}',
            "holds a boolean",
        ),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_parse_failures_never_raise(text, error):
    r = parse_judge_output(text, n_l1=3, n_l2=3, profile="lenient")
    assert r.parse_failed
    assert error in r.error
    assert r.has_failure  # as the reference records it; the score excludes it
    assert r.critical_failures == []
