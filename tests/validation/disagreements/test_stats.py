"""The pure disagreement math: kinds, linked steps, Jaccard and its summary."""

import pytest

from annotation.agreement import Undefined
from judging.stats.bootstrap import bootstrap_mean_ci
from validation.disagreements import stats as dis


@pytest.mark.parametrize(
    ("majority", "judged", "verdict", "kind"),
    [
        (True, True, True, "both_failure"),
        (True, True, False, "people_failure"),
        (False, True, True, "judge_failure"),
        (False, True, False, "both_none"),
        (None, True, True, "people_split"),
        (None, True, None, "people_split"),  # a tie first, as the validation page counts
        (True, True, None, "parse_failed"),
        (False, True, None, "parse_failed"),
        (True, False, None, None),
    ],
)
def test_kind_of(majority, judged, verdict, kind):
    assert dis.kind_of(majority=majority, judged=judged, verdict=verdict) == kind


def test_l2_links_ignore_non_numbers():
    failures = [{"L2_steps": [3, 1]}, {"L2_steps": [1, "x", True, None]}, {}]
    assert dis.l2_links(failures, key="L2_steps") == {1, 3}


def test_jaccard_by_hand():
    assert dis.jaccard({2, 3}, {2, 4}) == pytest.approx(1 / 3)
    assert dis.jaccard({2}, {2}) == 1.0
    assert dis.jaccard({1}, {2}) == 0.0
    assert dis.jaccard({1, 2, 3, 4}, {2}) == 0.25
    assert isinstance(dis.jaccard(set(), set()), Undefined)


def test_overlap_summary_mean_ci_and_counts():
    values = [1 / 3, Undefined("none"), 1.0, 0.5]
    out = dis.overlap_summary(values, n_resamples=500, seed=3)
    assert out["n_items"] == 4 and out["n_defined"] == 3 and out["n_no_l2_links"] == 1
    assert out["mean"]["value"] == pytest.approx((1 / 3 + 1.0 + 0.5) / 3)
    ci = out["mean"]["ci"]
    assert ci == bootstrap_mean_ci([1 / 3, 1.0, 0.5], n_resamples=500, seed=3).to_json()
    assert 1 / 3 <= ci["low"] <= out["mean"]["value"] <= ci["high"] <= 1.0


def test_overlap_summary_undefined_with_reasons():
    assert dis.overlap_summary([])["mean"] == {"value": None, "undefined": dis.NO_BOTH_FAILURE}
    out = dis.overlap_summary([Undefined("x")])
    assert out["mean"]["value"] is None and "L2 step" in out["mean"]["undefined"]
    assert "ci" not in dis.overlap_summary([0.5], n_resamples=0)["mean"]
