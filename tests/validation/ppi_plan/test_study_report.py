"""A study made from a plan shows, on its agreement report, its corrected How2Score: the interval
obtained, the one a uniform sample of the same size would have given and the target, in words;
no number and no placeholder while it is undefined, the reason said instead."""

from __future__ import annotations

import pytest

from validation.ppi_plan.words import interval_sentences

RESULT = {"how2score": 0.7234, "ci": [0.68, 0.7668], "half_width": 0.0434, "n_labelled": 120,
          "n_population": 600, "uniform_half_width": 0.053, "target": 0.05, "reached": True,
          "n_labels": 360, "method": "active inference"}  # fmt: skip


def test_the_interval_beside_the_uniform_one_and_the_target_in_words():
    first, compared, target = interval_sentences(RESULT, sampling="uncertainty")
    assert first == (
        "Corrected How2Score: 72.3% (95% interval 68.0–76.7%, ±4.3 points) from 120 items "
        "labelled by people and the judge's verdicts on 600."
    )
    assert compared.startswith("A uniform sample of the same 120 items would have given about ±5.3")
    assert "made the interval 18% narrower, so keep sampling this way" in compared
    assert target == "The target of ±5.0 points is reached: no more labels are needed."


def test_a_wider_interval_says_to_sample_uniformly_and_an_unreached_target_to_go_on():
    r = {**RESULT, "uniform_half_width": 0.04, "reached": False, "ci": [0.6, 1.02]}
    first, compared, target = interval_sentences(r, sampling="uncertainty")
    assert "60.0–100.0%" in first  # clipped to the score's range
    assert "did not narrow the interval here" in compared and "sample uniformly" in compared
    assert target == "The target of ±5.0 points is not reached yet: keep labelling."
    uniform = interval_sentences({**r, "target": None}, sampling="uniform")
    assert len(uniform) == 2 and "drawn uniformly" in uniform[1]


@pytest.mark.parametrize(
    "r",
    [
        {"how2score": None, "ci": None, "undefined": "fewer than 2 labelled items", "n_labels": 1},
        {"undefined": "fewer than 2 labelled items"},
    ],
)
def test_no_score_says_why_never_none(r):
    (sentence,) = interval_sentences(r, sampling="uncertainty")
    assert "No corrected How2Score yet" in sentence and "fewer than 2 labelled items" in sentence
    for word in ("None", "NaN", "nan", "inf"):
        assert word not in sentence


def test_an_undefined_uniform_comparison_says_why():
    r = {**RESULT, "uniform_half_width": None}
    compared = interval_sentences(r, sampling="uncertainty")[1]
    assert "cannot be said yet" in compared and "None" not in compared
