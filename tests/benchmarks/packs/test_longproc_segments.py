"""LongProc segment analysis, the pure part (seed 001 §5): cutting the gold output into four
segments along the task's units, the prefilled prefix of segment i, scoring segment i alone,
correctness per segment with bootstrap CIs. Worked examples by hand."""

from __future__ import annotations

import itertools

import pytest

from benchmarks.packs.longproc_segments import (
    SegmentError,
    bootstrap_ci,
    gold_answer,
    per_segment,
    prefilled_messages,
    prefix_for,
    score_segment,
    split_even,
    written_entries,
)
from tests.support.purity import django_imports

CITIES = ["Austin", "Boston", "Chicago", "Denver", "El Paso", "Fresno", "Gary", "Houston"]
CITIES += ["Irvine", "Jackson", "Kent"]
ROUTE = [f"From {a}, take a bus to {b}." for a, b in itertools.pairwise(CITIES)]
GOLD_ROUTE = "<Route>\n" + "\n".join(ROUTE) + "\n</Route>"  # 10 hops: 3, 3, 2, 2


def test_split_even_sizes_and_too_few_units():
    assert [len(s) for s in split_even(list("abcdefghij"))] == [3, 3, 2, 2]
    assert split_even(list("abcd")) == [["a"], ["b"], ["c"], ["d"]]
    assert [len(s) for s in split_even(list("abcdefgh"))] == [2, 2, 2, 2]
    with pytest.raises(SegmentError, match="has 3 entries; 4 segments need at least 4") as exc:
        split_even(list("abc"))
    assert exc.value.field == "gold"


def test_path_traversal_segments_and_prefixes():
    answer = gold_answer("path-traversal", GOLD_ROUTE)
    assert answer.segments == [ROUTE[0:3], ROUTE[3:6], ROUTE[6:8], ROUTE[8:10]]
    assert prefix_for(answer, 1) == ""
    assert prefix_for(answer, 3) == "<Route>\n" + "".join(line + "\n" for line in ROUTE[:6])
    # the gold without tags cuts the same
    assert gold_answer("path-traversal", "\n".join(ROUTE)).segments == answer.segments
    assert prefilled_messages("P", "") == [{"role": "user", "content": "P"}]
    assert prefilled_messages("P", "<Route>\n")[-1] == {"role": "assistant", "content": "<Route>\n"}
    with pytest.raises(SegmentError, match="must be 1 to 4"):
        prefix_for(answer, 5)


def test_path_traversal_segment_scored_alone():
    answer = gold_answer("path-traversal", GOLD_ROUTE)
    # segment 3 continues the prefilled route: its two hops right, the rest wrong → correct
    right = (
        "\n" + ROUTE[6] + "\n" + ROUTE[7].upper() + "\nFrom Irvine, take a ferry to Mars.\n</Route>"
    )
    scored = score_segment("path-traversal", answer, 3, right)
    assert (scored["score"], scored["n_gold"], scored["n_written"]) == (1.0, 2, 2)
    assert scored["first_divergence"] is None and scored["metric"] == "correct"
    # the second hop of segment 3 wrong
    wrong = ROUTE[6] + "\nFrom Houston, take a plane to Irvine.\n" + ROUTE[8]
    scored = score_segment("path-traversal", answer, 3, wrong)
    assert (scored["score"], scored["first_divergence"]) == (0.0, 2)
    # the route closed after one hop of the segment's two
    short = ROUTE[6] + "\n</Route>\n" + ROUTE[7]
    scored = score_segment("path-traversal", answer, 3, short)
    assert (scored["score"], scored["n_written"], scored["first_divergence"]) == (0.0, 1, 2)
    # segment 1 is generated from nothing: the entries after the last <Route> opener
    first = "I start at Austin.\n<Route>\n" + "\n".join(ROUTE[:3]) + "\nFrom Denver, take"
    assert score_segment("path-traversal", answer, 1, first)["score"] == 1.0
    assert score_segment("path-traversal", answer, 1, "\n".join(ROUTE))["score"] == 0.0  # no tag
    assert score_segment("path-traversal", answer, 2, None)["n_written"] == 0


TOM = [
    "- Step 1: (Anne location changed; ball location unchanged) {Anne location: kitchen; ball "
    "location: basket; Anne sees ball: False; Anne's belief on ball: None}",
    "- Step 2: (Anne location unchanged; ball location unchanged) {Anne location: kitchen; ball "
    "location: basket; Anne sees ball: False; Anne's belief on ball: None}",
    "- Step 3: (Anne location changed; ball location unchanged) {Anne location: hall; ball "
    "location: basket; Anne sees ball: True; Anne's belief on ball: basket}",
    "- Step 4: (Anne location unchanged; ball location changed) {Anne location: hall; ball "
    "location: box; Anne sees ball: True; Anne's belief on ball: box}",
    "Final Answer: box",
]


def test_tom_tracking_final_answer_is_the_last_unit():
    answer = gold_answer("tom-tracking", "Thinking...\n" + "\n".join(TOM))
    assert [len(s) for s in answer.segments] == [2, 1, 1, 1]
    assert answer.segments[3] == ["Final Answer: box"]
    assert prefix_for(answer, 2) == TOM[0] + "\n" + TOM[1] + "\n"  # no opener for ToM
    # segment 4: the Final Answer line, then the continuation ends there
    assert (
        score_segment("tom-tracking", answer, 4, "\nfinal answer: BOX.\n- Step 5: x")["score"]
        == 1.0
    )
    assert score_segment("tom-tracking", answer, 4, "Final Answer: basket")["score"] == 0.0
    # segment 1 from nothing: from the last "Step 1:" line
    out = "Let me track.\n" + "\n".join(TOM[:2]) + "\n" + TOM[2]
    assert written_entries("tom-tracking", out, prefilled=False) == TOM[:3]
    assert score_segment("tom-tracking", answer, 1, out)["score"] == 1.0


def test_html_to_tsv_rows_and_f1_per_segment():
    header = "Title\tPrice"
    rows = [f"Book {i}\t${i}.00" for i in range(1, 9)]  # 8 rows: 2 a segment
    answer = gold_answer("html-to-tsv", "```tsv\n" + header + "\n" + "\n".join(rows) + "\n```")
    assert answer.units == rows and answer.opener == "```tsv\nTitle\tPrice\n"
    assert prefix_for(answer, 2) == "```tsv\nTitle\tPrice\nBook 1\t$1.00\nBook 2\t$2.00\n"
    # segment 2: one of its two rows right (normalised: case ignored), one wrong → F1 0.5
    scored = score_segment("html-to-tsv", answer, 2, "BOOK 3\t$3.00\nBook 9\t$9.00\n```")
    assert scored["metric"] == "f1" and scored["score"] == pytest.approx(0.5)
    # segment 1 from nothing: the model's own header row is not a data row
    out = "Here you go:\n```tsv\nTitle\tPrice\nBook 1\t$1.00\nBook 2\t$2.00\nBook 3\t$3.00\n```"
    assert score_segment("html-to-tsv", answer, 1, out)["score"] == pytest.approx(1.0)


def test_tasks_without_a_gold_trace_are_refused():
    with pytest.raises(SegmentError, match="validator of its <Solution>") as exc:
        gold_answer("countdown", "x")
    assert exc.value.field == "task"
    with pytest.raises(SegmentError, match="unknown task"):
        gold_answer("pseudo", "x")
    with pytest.raises(SegmentError, match="gold output text") as exc:
        gold_answer("path-traversal", "  ")
    assert exc.value.field == "gold"


def test_per_segment_means_cis_and_failed_requests():
    rows = [{"segment": 1, "score": 1.0} for _ in range(10)]
    rows += [{"segment": 2, "score": float(i % 2)} for i in range(10)]  # 0.5
    rows += [{"segment": 3, "score": float(i < 2)} for i in range(10)]  # 0.2
    rows += [{"segment": 4, "score": None}, {"segment": 4, "score": 0.0}]
    table = per_segment(rows)
    assert [r["segment"] for r in table] == [1, 2, 3, 4]
    assert [r["mean"] for r in table] == [1.0, 0.5, 0.2, 0.0]
    assert (table[0]["ci_low"], table[0]["ci_high"]) == (1.0, 1.0)  # no spread: the value
    assert 0.1 <= table[1]["ci_low"] < 0.5 < table[1]["ci_high"] <= 0.9
    assert 0.0 <= table[2]["ci_low"] < 0.2 < table[2]["ci_high"] <= 0.6
    assert (table[3]["n"], table[3]["n_failed"], table[3]["ci_low"]) == (1, 1, None)
    assert per_segment(rows) == table  # seeded: the same CIs again
    assert bootstrap_ci([]) is None and bootstrap_ci([1.0]) is None


def test_the_module_is_pure():
    from benchmarks.packs import longproc_segments

    assert django_imports(longproc_segments) == {}
