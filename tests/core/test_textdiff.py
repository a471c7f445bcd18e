"""core.textdiff: line diffs between two versions, numbered in both texts, hand-checked."""

from __future__ import annotations

from core.textdiff import text_diff


def test_a_changed_and_an_added_line_with_their_numbers_and_context():
    old = "a\nb\nc\nd\ne\nf\ng\nh"
    new = "a\nb\nc\nD\ne\nf\ng\nh\ni"
    diff = text_diff(old, new, context=1)
    assert (diff.n_added, diff.n_removed) == (2, 1)
    assert diff.summary() == "2 line(s) added, 1 removed"
    rows = [(line.kind, line.text, line.old_no, line.new_no) for line in diff.lines]
    assert rows == [
        ("hunk", "lines 3–5 → 3–5", None, None),
        ("same", "c", 3, 3),
        ("removed", "d", 4, None),
        ("added", "D", None, 4),
        ("same", "e", 5, 5),
        ("hunk", "lines 8–8 → 8–9", None, None),
        ("same", "h", 8, 8),
        ("added", "i", None, 9),
    ]
    assert diff.unified().splitlines() == [
        "lines 3–5 → 3–5",
        " c",
        "-d",
        "+D",
        " e",
        "lines 8–8 → 8–9",
        " h",
        "+i",
    ]


def test_no_change_and_a_first_version():
    same = text_diff("x\ny", "x\ny")
    assert same.unchanged and same.lines == [] and same.summary() == "no change"
    first = text_diff("", "one\ntwo")
    assert (first.n_added, first.n_removed) == (2, 0)
    assert [line.kind for line in first.lines] == ["hunk", "added", "added"]
