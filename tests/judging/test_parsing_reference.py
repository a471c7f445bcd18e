"""The ``reference`` judge-output profile, case by case from the reference implementation's
rules: strict whole-text JSON, retries, lenient normalisation, ``int()`` steps."""

from __future__ import annotations

import json

import pytest

from judging.parsing import (
    PARSE_RETRIES,
    RETRY_SUFFIX,
    check_profile,
    parse_judge_output,
)

GOOD = {
    "reasoning": "L2 skips soaking.",
    "critical_failures": [{"failure": "No soaking", "L1_steps": [1], "L2_steps": [2]}],
}
GOOD_TEXT = json.dumps(GOOD)


def ref(text):
    return parse_judge_output(text, profile="reference")


def test_reference_is_the_default_profile():
    fenced = f"```json\n{GOOD_TEXT}\n```"
    assert parse_judge_output(fenced).parse_failed  # the default refuses what lenient recovers
    assert not parse_judge_output(fenced, profile="lenient").parse_failed


def test_unknown_profile_is_refused_by_name():
    with pytest.raises(ValueError, match="strict"):
        parse_judge_output("{}", profile="strict")
    assert check_profile("lenient") == "lenient"


def test_retry_constants_are_the_references():
    assert PARSE_RETRIES["reference"] == 2  # 3 calls in all
    assert RETRY_SUFFIX == "\n\nReturn ONLY valid json. Do not include any other text."


# --- strict decoding: JSON whitespace around the value is the only tolerance ----------------


@pytest.mark.parametrize(
    "text",
    [
        GOOD_TEXT,
        f"  {GOOD_TEXT}  ",
        f"\n\n{GOOD_TEXT}\n",
        f"\t\r\n{GOOD_TEXT}\r\n",
        json.dumps(GOOD, indent=2),
    ],
)
def test_whole_text_json_with_json_whitespace_parses(text):
    r = ref(text)
    assert not r.parse_failed
    assert r.critical_failures == GOOD["critical_failures"]
    assert r.reasoning == "L2 skips soaking." and r.n_failures == 1 and r.has_failure


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{GOOD_TEXT}\n```",  # fenced
        f"```\n{GOOD_TEXT}\n```",
        f"Here is my verdict:\n{GOOD_TEXT}",  # prose before
        f"{GOOD_TEXT}\nHope this helps.",  # prose after
        f"<think>hmm</think>{GOOD_TEXT}",  # reasoning block
        f"<think>hmm</think>\n{GOOD_TEXT}",
        "\ufeff" + GOOD_TEXT,  # a BOM
        '{"reasoning": "x", "critical_failures": [],}',  # trailing comma
        '{"reasoning": "line\nbreak", "critical_failures": []}',  # raw newline in a string
        "{'reasoning': 'x', 'critical_failures': []}",  # single quotes
        "\u00a0" + GOOD_TEXT,  # a non-JSON whitespace (NBSP)
        GOOD_TEXT + GOOD_TEXT,  # two objects
        '{"reasoning": "x"',  # truncated
        "",
        "   ",
        None,
    ],
)
def test_anything_but_one_json_value_is_a_retryable_failure(text):
    r = ref(text)
    assert r.parse_failed and r.retryable
    assert r.has_failure and r.n_failures == 0 and r.critical_failures == []
    assert r.reasoning == "" and r.error


@pytest.mark.parametrize("text", ["[]", "[{}]", '"text"', "3", "null", "true", "[1, 2]"])
def test_top_level_value_not_an_object_is_a_retryable_failure(text):
    r = ref(text)
    assert r.parse_failed and r.retryable and r.has_failure
    assert "expected a JSON object" in r.error


@pytest.mark.parametrize("text", ["{}", " {} ", "{\n}"])
def test_empty_object_is_a_failure_not_retried(text):
    r = ref(text)
    assert r.parse_failed and not r.retryable and r.has_failure and r.n_failures == 0


# --- normalisation after a successful parse ------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"reasoning": "fine"},  # missing
        {"reasoning": "fine", "critical_failures": None},  # null
        {"reasoning": "fine", "critical_failures": "none"},  # not a list
        {"reasoning": "fine", "critical_failures": {"failure": "x"}},  # an object, not a list
        {"reasoning": "fine", "critical_failures": 0},
        {"reasoning": "fine", "critical_failures": []},
        {"anything": 1},  # a non-empty object with neither key parses: no failures
    ],
)
def test_missing_null_or_non_list_failures_mean_zero(obj):
    r = ref(json.dumps(obj))
    assert not r.parse_failed and r.critical_failures == []
    assert not r.has_failure and r.n_failures == 0


def test_non_object_entries_are_dropped():
    obj = {"critical_failures": ["a string", 3, None, [1], {"failure": "kept", "L2_steps": [1]}]}
    r = ref(json.dumps(obj))
    assert r.critical_failures == [{"failure": "kept", "L1_steps": [], "L2_steps": [1]}]
    assert r.n_failures == 1 and r.has_failure


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (None, "None"),
        (3, "3"),
        (2.5, "2.5"),
        (True, "True"),
        (["a"], "['a']"),
        ({"k": 1}, "{'k': 1}"),
        ("", ""),
        ("  padded  ", "  padded  "),  # strings are kept as written
    ],
)
def test_failure_text_non_strings_become_their_str(failure, expected):
    r = ref(json.dumps({"critical_failures": [{"failure": failure}]}))
    assert r.critical_failures == [{"failure": expected, "L1_steps": [], "L2_steps": []}]
    assert r.has_failure and r.n_failures == 1


def test_failure_defaults_to_empty_text_and_an_empty_entry_still_counts():
    r = ref('{"critical_failures": [{}]}')
    assert r.critical_failures == [{"failure": "", "L1_steps": [], "L2_steps": []}]
    assert r.n_failures == 1 and r.has_failure and not r.parse_failed


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "None"),
        (5, "5"),
        (["a"], "['a']"),
        ("", ""),
    ],
)
def test_reasoning_non_strings_become_their_str(value, expected):
    r = ref(json.dumps({"reasoning": value, "critical_failures": []}))
    assert r.reasoning == expected


def test_missing_reasoning_is_empty():
    assert ref('{"critical_failures": []}').reasoning == ""


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (["3"], [3]),
        ([" 3 "], [3]),  # int() strips whitespace
        ([3.7], [3]),
        ([-2.9], [-2]),
        ([True, False], [1, 0]),
        ([0], [0]),  # no range check
        ([-1], [-1]),
        ([999], [999]),
        (["1_000"], [1000]),
        (["+4"], [4]),
        ([1, 1, 2], [1, 1, 2]),  # duplicates kept
        ([], []),
    ],
)
def test_step_numbers_go_through_int(steps, expected):
    obj = {"critical_failures": [{"failure": "f", "L1_steps": steps, "L2_steps": steps}]}
    r = ref(json.dumps(obj))
    assert not r.parse_failed
    assert r.critical_failures[0]["L1_steps"] == expected
    assert r.critical_failures[0]["L2_steps"] == expected


@pytest.mark.parametrize("value", [3, "3", None, {"a": 1}, True, 2.0])
def test_step_field_that_is_not_a_list_becomes_empty(value):
    obj = {"critical_failures": [{"failure": "f", "L1_steps": value, "L2_steps": value}]}
    r = ref(json.dumps(obj))
    assert not r.parse_failed
    assert r.critical_failures == [{"failure": "f", "L1_steps": [], "L2_steps": []}]


@pytest.mark.parametrize(
    "bad",
    ["step 1", None, "3.0", "", "one", [1], {"n": 1}, "1e3"],
)
@pytest.mark.parametrize("key", ["L1_steps", "L2_steps"])
def test_a_value_int_refuses_fails_the_item_not_retried(bad, key):
    entry = {"failure": "f", "L1_steps": [1], "L2_steps": [1]}
    entry[key] = [1, bad]
    r = ref(json.dumps({"reasoning": "r", "critical_failures": [entry]}))
    assert r.parse_failed and not r.retryable
    assert r.has_failure and r.n_failures == 0 and r.critical_failures == [] and r.reasoning == ""
    assert key in r.error


@pytest.mark.parametrize(
    "text",
    [
        '{"critical_failures": [{"L1_steps": [NaN]}]}',
        '{"critical_failures": [{"L1_steps": [Infinity]}]}',
    ],
)
def test_non_finite_numbers_decode_but_int_refuses_them(text):
    r = ref(text)
    assert r.parse_failed and not r.retryable


def test_has_failure_is_failures_or_parse_failure():
    assert ref('{"critical_failures": [{"failure": "x"}]}').has_failure
    assert not ref('{"reasoning": "ok", "critical_failures": []}').has_failure
    assert ref("not json").has_failure
    assert ref("{}").has_failure


def test_no_range_check_and_step_numbers_kept_even_with_counts():
    obj = {"critical_failures": [{"failure": "f", "L1_steps": [42], "L2_steps": [0]}]}
    r = parse_judge_output(json.dumps(obj), profile="reference", n_l1=3, n_l2=3)
    assert r.critical_failures[0]["L1_steps"] == [42] and r.critical_failures[0]["L2_steps"] == [0]


def test_duplicate_keys_last_wins_as_json_loads():
    r = ref('{"critical_failures": [{"failure": "a"}], "critical_failures": []}')
    assert not r.parse_failed and r.n_failures == 0
