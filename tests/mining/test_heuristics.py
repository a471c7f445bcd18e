"""The B.3 heuristics filter, checked against a direct transcription of its definition."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from mining.heuristics import (
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


# --- the 3- and 4-gram thresholds at their boundaries ------------------------------------


def _unique_steps(count, words, tag):
    return [" ".join(f"{tag}{i}w{j}" for j in range(words)) for i in range(count)]


def _four_gram_steps(copies):
    """10 four-word steps, ``copies`` of them "knead the dough well": 4-, 3- and 2-gram rates
    are all (copies - 1) / 10."""
    return ["knead the dough well"] * copies + _unique_steps(10 - copies, 4, "v")


def test_three_gram_threshold_boundary():
    # 0.35 exactly is rejected (>=), by the 3-gram rule: 2-grams are below 0.40, no 4-grams
    # 20 steps, past the default 15: the step range is widened, the thresholds are the defaults
    cfg = HeuristicsConfig(min_steps=1, max_steps=20)
    assert cfg.thresholds == {2: 0.40, 3: 0.35, 4: 0.30}
    steps = ["mix the dough"] * 8 + _unique_steps(12, 3, "u")  # 20 three-grams, 7 repeats
    rates = repetition_rates(steps)
    assert rates[3] == 0.35 and rates[2] == 0.35 and rates[4] == 0.0
    r = apply_heuristics(steps, cfg)
    assert not r.passed and r.reason == "high repetition: 3-gram rate 0.35 >= 0.35"
    # one repeat fewer (0.30) passes
    fewer = ["mix the dough"] * 7 + _unique_steps(13, 3, "u")
    assert repetition_rates(fewer)[3] == 0.30 and apply_heuristics(fewer, cfg).passed
    # the same 0.35 against a threshold a hair above passes: the comparison is at the boundary
    above = HeuristicsConfig(min_steps=1, max_steps=20, thresholds={2: 0.40, 3: 0.35 + 1e-12})
    assert apply_heuristics(steps, above).passed


def test_four_gram_threshold_boundary():
    cfg = HeuristicsConfig()  # the defaults: 5..15 steps, 0.40 / 0.35 / 0.30
    assert cfg.thresholds == {2: 0.40, 3: 0.35, 4: 0.30}
    steps = _four_gram_steps(copies=4)  # 10 four-grams, 3 repeats = 0.30 exactly
    rates = repetition_rates(steps)
    assert rates[4] == 0.30 and rates[3] == 0.30 and rates[2] == 0.30
    r = apply_heuristics(steps, cfg)
    assert not r.passed and r.reason == "high repetition: 4-gram rate 0.30 >= 0.30"
    # one repeat fewer (0.20) passes
    assert apply_heuristics(_four_gram_steps(copies=3), cfg).passed
    # a threshold a hair above 0.30 lets exactly 0.30 pass
    above = HeuristicsConfig(thresholds={2: 0.40, 3: 0.35, 4: 0.30 + 1e-12})
    assert apply_heuristics(steps, above).passed
