"""Line diffs between two versions of a text (``difflib``), for the version pages of the
console: hunks of changed lines with a few lines of context around them, each line numbered
in the old and the new text. Pure Python (no Django)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT_LINES = 2


@dataclass(frozen=True)
class DiffLine:
    """One line of a diff: ``kind`` is ``hunk`` (a header: where the next lines are),
    ``same``, ``removed`` or ``added``; ``old_no`` / ``new_no`` are 1-based line numbers."""

    kind: str
    text: str
    old_no: int | None = None
    new_no: int | None = None


@dataclass(frozen=True)
class Diff:
    lines: list[DiffLine]
    n_added: int
    n_removed: int

    @property
    def unchanged(self) -> bool:
        return not (self.n_added or self.n_removed)

    def summary(self) -> str:
        if self.unchanged:
            return "no change"
        return f"{self.n_added} line(s) added, {self.n_removed} removed"

    def unified(self) -> str:
        """The diff as plain text (``+``/``-``/space prefixes), e.g. for the API."""
        marks = {"hunk": "", "same": " ", "removed": "-", "added": "+"}
        return "\n".join(f"{marks[line.kind]}{line.text}" for line in self.lines)


def text_diff(old: str, new: str, *, context: int = CONTEXT_LINES) -> Diff:
    """The changes from ``old`` to ``new``, line by line (``old`` empty: every line added)."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    lines: list[DiffLine] = []
    n_added = n_removed = 0
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        lines.append(
            DiffLine(
                "hunk",
                f"lines {first[1] + 1}–{last[2]} → {first[3] + 1}–{last[4]}",
            )
        )
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(
                    DiffLine("same", a[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)
                )
                continue
            if tag in ("replace", "delete"):
                lines.extend(DiffLine("removed", a[i], old_no=i + 1) for i in range(i1, i2))
                n_removed += i2 - i1
            if tag in ("replace", "insert"):
                lines.extend(DiffLine("added", b[j], new_no=j + 1) for j in range(j1, j2))
                n_added += j2 - j1
    return Diff(lines=lines, n_added=n_added, n_removed=n_removed)
