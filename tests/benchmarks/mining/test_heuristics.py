"""The B.3 heuristics filter, checked against a direct transcription of its definition."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from benchmarks.mining.heuristics import (
    HeuristicsConfig,
    apply_heuristics,
    normalize_words,
    repetition_rates,
)


def spec_rate(steps, n):
    """B.3 / reference definition: pooled n-grams of normalised steps; repeats beyond first / total."""
    if len(steps) < 2:
        return 0.0
    grams = []
    for s in steps:
        words = re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", s.lower())).strip().split()
        grams += (
            [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
            if len(words) >= n
            else []
        )
    if not grams:
        return 0.0
    return sum(c - 1 for c in Counter(grams).values() if c > 1) / len(grams)


def test_rates_match_the_definition_on_random_procedures():
    rng = random.Random(7)
    vocab = [
        "mix",
        "the",
        "flour",
        "water",
        "Stir!",
        "bowl,",
        "dough.",
        "oven",
        "heat",
        "(gently)",
        "pan",
    ]
    for _ in range(300):
        steps = [
            " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 9)))
            for _ in range(rng.randint(0, 8))
        ]
        rates = repetition_rates(steps)
        for n in (2, 3, 4):
            assert rates[n] == pytest.approx(spec_rate(steps, n))


def test_normalisation_lowercases_and_turns_punctuation_into_spaces():
    assert normalize_words("Pre-heat the OVEN, then: wait.") == [
        "pre",
        "heat",
        "the",
        "oven",
        "then",
        "wait",
    ]


def test_ngrams_do_not_cross_step_boundaries():
    # "a b" + "c d": pooled bigrams are (a b), (c d) only, no (b c).
    assert repetition_rates(["a b", "c d"])[2] == 0.0
    assert repetition_rates(["a b", "a b"])[2] == 0.5


def test_single_step_has_no_repetition():
    assert repetition_rates(["stir stir stir stir stir"]) == {2: 0.0, 3: 0.0, 4: 0.0}


@pytest.mark.parametrize("n_steps,ok", [(4, False), (5, True), (15, True), (16, False)])
def test_step_count_bounds_default_5_to_15(n_steps, ok):
    steps = [f"step number {i} does {i * 7} unique things" for i in range(n_steps)]
    result = apply_heuristics(steps)
    assert result.passed is ok
    if not ok:
        assert ("too few" if n_steps < 5 else "too many") in result.reason


def test_step_count_bounds_are_configurable():
    steps = [f"distinct step {i}" for i in range(3)]
    assert not apply_heuristics(steps).passed
    assert apply_heuristics(steps, HeuristicsConfig(min_steps=3, max_steps=4)).passed
    with pytest.raises(ValueError):
        HeuristicsConfig(min_steps=6, max_steps=5)


def test_thresholds_are_inclusive():
    # 5 steps "w0 w1", 4 of them equal: bigrams 5, repeated 3 -> 0.6 >= 0.40.
    rep = ["add salt", "add salt", "add salt", "add salt", "stir well"]
    r = apply_heuristics(rep)
    assert not r.passed and r.reason.startswith("high repetition: 2-gram rate 0.60 >= 0.40")
    # Exactly 0.40 bigram repetition with no 3/4-grams: rejected (>=).
    steps = ["a b", "a b", "c d", "e f", "a b"]  # 5 bigrams, 2 repeats = 0.4
    assert repetition_rates(steps)[2] == pytest.approx(0.4)
    assert not apply_heuristics(steps).passed
    # Exactly 0.30 fourgram rate rejects even with the 2/3-gram rates below their thresholds.
    base = ["one two three four five six seven eight nine ten"]
    steps = [
        *base,
        "eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty",
        "one two three four x1 x2 x3 x4 x5 x6",
        "y1 y2 y3 y4 y5 y6 y7 y8 y9 y10",
        "z1 z2 z3 z4 z5 z6 z7 z8 z9 z10",
    ]
    rates = repetition_rates(steps)
    assert rates[4] < 0.30 and apply_heuristics(steps).passed


def test_clean_procedure_passes_with_rates_recorded():
    steps = [
        "Preheat the oven to 200 C.",
        "Mix flour and water.",
        "Knead the dough for ten minutes.",
        "Shape the loaf.",
        "Bake for 40 minutes.",
    ]
    r = apply_heuristics(steps)
    assert r.passed and r.reason == "" and set(r.rates) == {2, 3, 4}
