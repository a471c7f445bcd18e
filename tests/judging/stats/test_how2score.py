"""How2Score with uncertainty (pure): scores, CIs, tokens, neighbour tests with Holm."""

import pytest

from judging.stats.how2score import generator_scores, neighbour_tests


def records(name, outcomes, *, topic="t", tokens=None, parse_failed=0):
    out = [
        {
            "generator": name,
            "procedure_id": i,
            "topic": topic if i % 2 else "u",
            "has_failure": not ok,
            "parse_failed": False,
            "generated_tokens": tokens,
        }
        for i, ok in enumerate(outcomes)
    ]
    out += [
        {"generator": name, "procedure_id": 1000 + k, "parse_failed": True, "has_failure": True}
        for k in range(parse_failed)
    ]
    return out


def test_scores_ranked_with_intervals_tokens_and_topics():
    """a: 30 of 40 items without failure (75%), b: 10 of 40 (25%); 2 unparsed items of b are
    left out of its score but counted."""
    recs = records("a", [1] * 30 + [0] * 10, tokens=100) + records(
        "b", [1] * 10 + [0] * 30, tokens=250, parse_failed=2
    )
    rows, outcomes = generator_scores(recs, n_resamples=1000, seed=0)
    assert [r["generator"] for r in rows] == ["a", "b"] and rows[0]["rank"] == 1
    a, b = rows
    assert a["how2score"] == 0.75 and a["n_examples"] == 40 and a["avg_generated_tokens"] == 100
    assert b["how2score"] == 0.25 and b["n_parse_failed"] == 2 and b["n_examples"] == 40
    assert a["ci"]["low"] < 0.75 < a["ci"]["high"] and a["ci"]["n_resamples"] == 1000
    # the half-width of a 95% interval of a share of 40: about 1.96·√(0.75·0.25/40) = 0.134
    assert a["ci"]["high"] - a["ci"]["low"] == pytest.approx(0.268, abs=0.04)
    topics = {t["topic"]: t for t in a["by_topic"]}
    assert topics["t"]["n_examples"] == 20 and topics["u"]["n_examples"] == 20
    assert topics["t"]["how2score"] == 0.75 and "ci" in topics["t"]
    assert outcomes["a"][0] == 1 and outcomes["a"][39] == 0
    assert rows == generator_scores(recs, n_resamples=1000, seed=0)[0]


def test_neighbour_tests_mcnemar_holm_and_paired_difference():
    """a vs b on 40 common items: 20 items only a gets right, 0 only b: McNemar p = 2·0.5^20
    = 1.907e-6; b vs c: identical outcomes, p = 1. Holm over the two tests: (3.81e-6, 1)."""
    outcomes = {
        "a": {i: int(i < 30) for i in range(40)},
        "b": {i: int(i < 10) for i in range(40)},
        "c": {i: int(i < 10) for i in range(40)},
    }
    ab, bc = neighbour_tests(["a", "b", "c"], outcomes, n_resamples=500, seed=0)
    assert (ab["n_common"], ab["n_a_only"], ab["n_b_only"]) == (40, 20, 0)
    assert ab["p_value"] == pytest.approx(2 * 0.5**20)
    assert ab["p_holm"] == pytest.approx(4 * 0.5**20) and ab["significant"]
    assert ab["difference"] == pytest.approx(0.5)
    assert ab["difference_ci"]["low"] < 0.5 < ab["difference_ci"]["high"]
    assert bc["p_value"] == 1.0 and bc["p_holm"] == 1.0 and not bc["significant"]


def test_neighbours_without_common_items():
    (t,) = neighbour_tests(["a", "b"], {"a": {1: 1}, "b": {2: 0}}, n_resamples=100)
    assert t["n_common"] == 0 and t["difference"] is None and not t["significant"]
