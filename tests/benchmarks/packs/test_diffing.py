"""Entry alignment for the long-output viewer: rows, first divergence, folding, inline words."""

from __future__ import annotations

from benchmarks.packs.diffing import align, fold, inline_diff, split_lines


def test_identical_sequences_have_no_divergence():
    diff = align(["a", "b"], ["a", " b "])
    assert diff.identical and diff.first_divergence is None
    assert diff.counts == {"equal": 2, "changed": 0, "inserted": 0, "deleted": 0}


def test_rows_and_first_divergence():
    gold = ["Step 1: a", "Step 2: b", "Step 3: c", "Step 4: d"]
    pred = ["Step 1: a", "Step 2: B", "Step 3: c", "Step 4: d", "Step 5: e"]
    diff = align(gold, pred)
    assert [(r.kind, r.left_index, r.right_index) for r in diff.rows] == [
        ("equal", 1, 1),
        ("changed", 2, 2),
        ("equal", 3, 3),
        ("equal", 4, 4),
        ("inserted", None, 5),
    ]
    assert diff.first_divergence == 1
    deleted = align(["x", "y", "z"], ["x", "z"])
    assert [r.kind for r in deleted.rows] == ["equal", "deleted", "equal"]
    assert deleted.rows[1].left == "y" and deleted.rows[1].right_index is None
    assert align([], ["a"]).rows[0].kind == "inserted"


def test_fold_keeps_context_around_differences():
    gold = [f"line {k}" for k in range(100)]
    pred = list(gold)
    pred[50] = "changed line"
    diff = align(gold, pred)
    segments = fold(diff.rows, context=3, min_run=10)
    assert [(s.folded, s.count, s.first_row) for s in segments] == [
        (True, 47, 0),
        (False, 7, 47),
        (True, 46, 54),
    ]
    assert sum(s.count for s in segments) == 100
    assert segments[1].rows[3].kind == "changed"
    # Short runs stay open; an identical pair folds into one segment.
    assert all(not s.folded for s in fold(align(gold[:8], pred[:8]).rows))
    assert [(s.folded, s.count) for s in fold(align(gold, gold).rows)] == [(True, 100)]


def test_inline_diff_marks_changed_words():
    left, right = inline_diff("wash the cells twice", "wash the beads twice")
    assert left == [
        ("equal", "wash the "),
        ("changed", "cells"),
        ("equal", " "),
        ("equal", "twice"),
    ]
    assert right == [
        ("equal", "wash the "),
        ("changed", "beads"),
        ("equal", " "),
        ("equal", "twice"),
    ]
    assert "".join(t for _k, t in left) == "wash the cells twice"
    long_left, _ = inline_diff("x" * 3000, "y")
    assert long_left == [("changed", "x" * 3000)]


def test_split_lines_drops_trailing_blanks():
    assert split_lines("a\n\nb\n\n\n") == ["a", "", "b"]
