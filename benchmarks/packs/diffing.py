"""Entry alignment for the long-output viewer and the CustomPlans step diff: gold vs prediction
as aligned rows (equal / changed / inserted / deleted), the first divergence, folding of long
equal runs, and a word-level highlight for changed rows. Pure: no Django imports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

EQUAL, CHANGED, INSERTED, DELETED = "equal", "changed", "inserted", "deleted"
KINDS = (EQUAL, CHANGED, INSERTED, DELETED)


@dataclass(frozen=True)
class Row:
    """One aligned row. Indices are 1-based positions in the left (gold) and right (prediction)
    sequences; ``None`` on the side that has no entry (inserted: no left; deleted: no right)."""

    kind: str
    left_index: int | None
    right_index: int | None
    left: str = ""
    right: str = ""


@dataclass
class Segment:
    """A run of rows: shown, or folded (a long run of equal rows, collapsed by default)."""

    rows: list[Row]
    folded: bool = False
    first_row: int = 0  # 0-based position of the segment's first row in the whole diff

    @property
    def count(self) -> int:
        return len(self.rows)


@dataclass
class Alignment:
    rows: list[Row]
    first_divergence: int | None  # 0-based row position of the first non-equal row
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return self.first_divergence is None


def _key(line: str) -> str:
    return " ".join(line.split())


def align(left: Sequence[str], right: Sequence[str]) -> Alignment:
    """Align two sequences of entries (steps or lines) by a longest-matching-blocks diff on
    their whitespace-normalised text. A replaced block pairs entries one to one as ``changed``;
    what is left over is ``deleted`` (left only) or ``inserted`` (right only)."""
    matcher = SequenceMatcher(
        None, [_key(s) for s in left], [_key(s) for s in right], autojunk=False
    )
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(
                Row(EQUAL, i + 1, j + 1, left[i], right[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        rows.extend(
            Row(CHANGED, i1 + k + 1, j1 + k + 1, left[i1 + k], right[j1 + k]) for k in range(paired)
        )
        rows.extend(Row(DELETED, i + 1, None, left[i], "") for i in range(i1 + paired, i2))
        rows.extend(Row(INSERTED, None, j + 1, "", right[j]) for j in range(j1 + paired, j2))
    return finish(rows)


def finish(rows: list[Row]) -> Alignment:
    """An :class:`Alignment` over ready rows: counts per kind and the first divergence."""
    counts = dict.fromkeys(KINDS, 0)
    first = None
    for pos, row in enumerate(rows):
        counts[row.kind] += 1
        if first is None and row.kind != EQUAL:
            first = pos
    return Alignment(rows, first, counts)


def fold(rows: Sequence[Row], *, context: int = 3, min_run: int = 10) -> list[Segment]:
    """Split rows into segments, folding each run of at least ``min_run`` equal rows except
    ``context`` rows next to a difference (a run at the start or end keeps context only on the
    side that touches a difference)."""
    segments: list[Segment] = []
    shown: list[Row] = []
    shown_start = 0

    def flush_shown(upto: int) -> None:
        nonlocal shown, shown_start
        if shown:
            segments.append(Segment(shown, False, shown_start))
        shown, shown_start = [], upto

    pos = 0
    n = len(rows)
    while pos < n:
        if rows[pos].kind != EQUAL:
            if not shown:
                shown_start = pos
            shown.append(rows[pos])
            pos += 1
            continue
        end = pos
        while end < n and rows[end].kind == EQUAL:
            end += 1
        keep_head = context if pos > 0 else 0
        keep_tail = context if end < n else 0
        if end - pos >= min_run and end - pos > keep_head + keep_tail:
            if not shown:
                shown_start = pos
            shown.extend(rows[pos : pos + keep_head])
            flush_shown(pos + keep_head)
            segments.append(
                Segment(list(rows[pos + keep_head : end - keep_tail]), True, pos + keep_head)
            )
            shown_start = end - keep_tail
            shown.extend(rows[end - keep_tail : end])
        else:
            if not shown:
                shown_start = pos
            shown.extend(rows[pos:end])
        pos = end
    flush_shown(n)
    return segments


def inline_diff(
    left: str, right: str, *, max_chars: int = 2000
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Word-level highlight of a changed row: (kind, text) pieces for each side, kind being
    ``equal`` or ``changed``. Lines longer than ``max_chars`` come back whole as changed."""
    if len(left) > max_chars or len(right) > max_chars:
        return [(CHANGED, left)], [(CHANGED, right)]
    a, b = left.split(" "), right.split(" ")
    out_a: list[tuple[str, str]] = []
    out_b: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        kind = EQUAL if tag == "equal" else CHANGED
        if i2 > i1:
            out_a.append((kind, " ".join(a[i1:i2])))
        if j2 > j1:
            out_b.append((kind, " ".join(b[j1:j2])))
    return _spaced(out_a), _spaced(out_b)


def _spaced(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Put back the spaces between pieces, outside the changed pieces (so a highlight covers
    the words only)."""
    out: list[tuple[str, str]] = []
    for k, (kind, text) in enumerate(pieces):
        last = k == len(pieces) - 1
        if kind == EQUAL:
            out.append((kind, text if last else text + " "))
        else:
            out.append((kind, text))
            if not last:
                out.append((EQUAL, " "))
    return out


def split_lines(text: str) -> list[str]:
    """A raw completion as entries: its lines, trailing blank lines dropped."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines
