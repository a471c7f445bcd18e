"""Pure tests of the D.3 / E.4 scorers with hand-computed values (no database)."""

from __future__ import annotations

import math

import pytest

from benchmarks import scorers
from benchmarks.scorers import (
    ScoreInput,
    dup_ngram_rate,
    get_scorer,
    get_scorers,
    has_duplicate_steps,
    length_reward,
    score_example,
    step_count_mismatch,
    step_format_ok,
    summarize,
)
from benchmarks.tokens import count_steps_tokens


def test_step_count_mismatch():
    assert step_count_mismatch(["a", "b"], ["x", "y"]) == 0
    assert step_count_mismatch(["a"], ["x", "y"]) == 1
    assert step_count_mismatch(["a", "b", "c"], ["x", "y"]) == 1


def test_duplicate_steps_is_exact_string_repeat():
    assert has_duplicate_steps(["Boil water.", "Boil water."]) == 1
    assert has_duplicate_steps(["Boil water.", "boil water."]) == 0
    assert has_duplicate_steps([]) == 0


def test_dup_ngram_rate_hand_computed():
    steps = ["a b a", "b a"]  # tokens: a b a b a
    assert dup_ngram_rate(steps, 1) == pytest.approx(3 / 5)  # a:3 -> 2, b:2 -> 1
    assert dup_ngram_rate(steps, 2) == pytest.approx(2 / 4)  # ab x2, ba x2
    assert dup_ngram_rate(steps, 3) == pytest.approx(1 / 3)  # aba x2, bab
    assert dup_ngram_rate(steps, 4) == 0.0  # abab, baba
    assert dup_ngram_rate(["a b"], 3) == 0.0  # no trigrams
    row = get_scorer("dup_ngram_rate").score(ScoreInput(predicted_steps=steps, reference_steps=[]))
    assert row["dup_ngram_rate"] == pytest.approx((3 / 5 + 2 / 4 + 1 / 3 + 0) / 4)


def test_step_format_verifier():
    assert step_format_ok("1. a\n2. b\n3. c", 3) == 1
    assert step_format_ok("Here you go:\n1. a\n2. b\n3. c\nDone.", 3) == 1  # stray text allowed
    assert step_format_ok("1. a\n2. b", 3) == 0  # wrong count
    assert step_format_ok("1. a\n3. b\n4. c", 3) == 0  # not consecutive
    assert step_format_ok("2. a\n3. b", None) == 0  # does not start at 1
    assert step_format_ok("- a\n- b", 2) == 0  # not numbered
    assert step_format_ok("1. a\n2. b", None) == 1  # no expected count given
    assert step_format_ok("<think>1. x</think>1. a\n2. b", 2) == 1


def test_length_reward_hand_computed():
    assert length_reward(1.0) == 1.0
    assert length_reward(1.2) == 1.0 and length_reward(0.8) == 1.0  # band edges
    assert length_reward(1.5) == pytest.approx(math.exp(-5 * 0.3 / 0.8))  # 0.15335
    assert length_reward(0.5) == pytest.approx(0.153354966)
    assert length_reward(0.0) == pytest.approx(math.exp(-5))
    assert length_reward(2.0) == pytest.approx(math.exp(-5))


def test_token_ratio_and_length_reward_scorers_use_o200k():
    # "Hello world" is 2 o200k_base tokens, "Hello" is 1.
    assert count_steps_tokens(["Hello world", "Hello"]) == 3
    item = ScoreInput(
        predicted_steps=["Hello world", "Hello world"], reference_steps=["Hello world", "Hello"]
    )
    row = score_example(item, get_scorers(["token_ratio", "length_reward"]))
    assert row["gen_tokens"] == 4 and row["ref_tokens"] == 3
    assert row["gen_ref_ratio"] == pytest.approx(4 / 3)
    assert row["length_reward"] == pytest.approx(math.exp(-5 * (1 / 3 - 0.2) / 0.8))
    empty_ref = get_scorer("length_reward").score(
        ScoreInput(predicted_steps=["a"], reference_steps=[])
    )
    assert empty_ref["length_reward"] is None


def test_summary_rates_and_ratio_of_means():
    items = [
        ScoreInput(
            predicted_steps=["a", "a"],
            reference_steps=["x", "y"],
            completion="1. a\n2. a",
            gen_tokens=10,
            ref_tokens=10,
        ),
        ScoreInput(
            predicted_steps=["b"],
            reference_steps=["x", "y"],
            completion="1. b",
            gen_tokens=30,
            ref_tokens=10,
        ),
    ]
    all_scorers = get_scorers()
    rows = [score_example(i, all_scorers) for i in items]
    s = summarize(rows, all_scorers)
    assert s["n_examples"] == 2
    assert s["step_count_mismatch"] == 0.5
    assert s["duplicate_steps"] == 0.5
    assert s["step_format"] == 0.5
    assert s["avg_gen_tokens"] == 20 and s["avg_ref_tokens"] == 10
    assert s["gen_ref_ratio"] == 2.0  # ratio of means (Table 12)
    assert s["mean_example_gen_ref_ratio"] == 2.0  # (1 + 3) / 2
    assert s["length_reward"] == pytest.approx((1 + math.exp(-5 * 1.8 / 0.8)) / 2)
    # example 1: tokens "a a" -> unigram 1/2, others 0 -> mean 1/8; example 2: all 0
    assert s["dup_ngram_rate"] == pytest.approx((1 / 8 + 0) / 2)


class ConstantScorer:
    name = "constant"

    def score(self, item):
        return {"constant": 7}

    def summarize(self, rows):
        return {"constant_sum": sum(r["constant"] for r in rows)}


def test_registry_by_name_and_dotted_path():
    assert get_scorer("step_format").name == "step_format"
    s = get_scorer("tests.benchmarks.generation.test_scorers.ConstantScorer")
    assert summarize([s.score(None), s.score(None)], [s]) == {"n_examples": 2, "constant_sum": 14}
    with pytest.raises(ValueError, match="unknown scorer 'nope'"):
        get_scorer("nope")
    with pytest.raises(ValueError, match="cannot be imported"):
        get_scorer("tests.benchmarks.generation.test_scorers.Missing")


def test_register_decorator_adds_scorer():
    @scorers.register("test_constant")
    class Registered(ConstantScorer):
        pass

    try:
        assert isinstance(get_scorer("test_constant"), Registered)
    finally:
        scorers.SCORERS.pop("test_constant")
