"""The reward request's validation and the reward components (pure)."""

import math

import pytest

from benchmarks.tokens import count_steps_tokens
from judging.reward import spec

REF = ["Boil the water in a kettle.", "Pour the water over the coffee grounds."]


def item(**fields):
    return {
        "completion": "1. Boil the water in a kettle.\n2. Pour the water over the coffee grounds.",
        **fields,
    }


def test_valid_request_and_defaults():
    judge, items, weights = spec.parse_request(
        {
            "judge": " j ",
            "items": [
                item(example_id="ex-1", id="a"),
                item(goal="Make coffee", reference_steps=REF),
            ],
            "weights": {"length": 0.5},
        }
    )
    assert judge == "j" and weights == {"how2score": 1.0, "step_format": 1.0, "length": 0.5}
    assert items[0].example_id == "ex-1" and items[0].client_id == "a"
    assert items[1].goal == "Make coffee" and items[1].reference_steps == REF


def test_every_problem_is_reported_with_its_item():
    with pytest.raises(spec.BatchError) as info:
        spec.parse_request(
            {
                "judge": "",
                "weights": {"speed": 1, "length": "x"},
                "items": [
                    {"example_id": "e"},
                    item(goal="g"),
                    item(example_id="e", goal="g", reference_steps=REF),
                    "nope",
                    item(goal="g", reference_steps=[], resources="x"),
                ],
            }
        )
    fields = {(e["index"], e["field"]) for e in info.value.errors}
    assert (None, "judge") in fields and (None, "weights.speed") in fields
    assert (None, "weights.length") in fields
    assert (0, "items[0].completion") in fields
    assert (1, "items[1].reference_steps") in fields  # missing
    assert (2, "items[2]") in fields  # both example_id and an inline procedure
    assert (3, "items[3]") in fields
    assert (4, "items[4].resources") in fields and (4, "items[4].reference_steps") in fields
    with pytest.raises(spec.BatchError, match="non-empty list"):
        spec.parse_request({"judge": "j", "items": []})
    with pytest.raises(spec.BatchError, match="at most 256"):
        spec.parse_request({"judge": "j", "items": [item(example_id="e")] * 257})
    with pytest.raises(spec.BatchError, match="JSON object"):
        spec.parse_request([1, 2])


def test_components_and_combination():
    """The completion repeats the reference: step format 1 (1., 2. for 2 reference steps),
    gen/ref = 1, length reward 1; with the judge's no_failure the reward is 1 + 1 + 1 = 3."""
    _, (it,), weights = spec.parse_request(
        {"judge": "j", "items": [item(goal="g", reference_steps=REF)]}
    )
    parts = spec.components(it)
    assert parts.predicted_steps == REF and parts.step_format == 1
    assert parts.ratio == 1.0 and parts.length == 1.0
    assert spec.combine(how2score=1, parts=parts, weights=weights) == 3.0
    assert spec.combine(how2score=None, parts=parts, weights=weights) is None
    result = spec.item_result(it, parts, {"has_failure": True, "parse_failed": False}, weights)
    assert result["components"] == {"how2score": 0, "step_format": 1, "length": 1.0}
    assert result["reward"] == 2.0


def test_wrong_numbering_and_double_length():
    """'1.', '3.': not consecutive → step format 0. Each step written twice: gen/ref ≈ 2, so the
    length reward is exp(−5·(|r − 1| − 0.2)/0.8) (exp(−5) = 0.0067 at r = 2)."""
    doubled = "\n".join(f"{i + 1}. {s} {s}" for i, s in enumerate(REF))
    _, items, _ = spec.parse_request(
        {
            "judge": "j",
            "items": [
                {"completion": "1. a\n3. b", "goal": "g", "reference_steps": REF},
                {"completion": doubled, "goal": "g", "reference_steps": REF},
            ],
        }
    )
    assert spec.components(items[0]).step_format == 0
    parts = spec.components(items[1])
    r = count_steps_tokens([f"{s} {s}" for s in REF]) / count_steps_tokens(REF)
    assert parts.ratio == pytest.approx(r) and 1.9 < r < 2.1
    assert parts.length == pytest.approx(math.exp(-5 * (abs(r - 1) - 0.2) / 0.8))
