"""The project speaks of itself: no tracked page, code, comment, test name or docstring names the
project's development history by an internal label (an issue, stop, session or goal number) or
the machine it was developed on. Product history belongs in CHANGELOG.md, in a user's terms.

The scan covers every file ``git ls-files`` lists except vendored code (``static/vendor/``) and
binary files. Citations are not labels: a journal's "Volume 3, Issue 2", an upstream project's
"GitHub issue #123", a procedure's "Goal 3:" and Prolific's ``SESSION_ID`` pass."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXCLUDED_PREFIXES = ("static/vendor/",)

# What a label looks like, by kind. A label may sit inside a name (a test named after an issue's
# number), so only a letter before it rules it out. Case matters where a capital marks ordinary text (a task's
# "Goal 3:").
LABELS: dict[str, re.Pattern[str]] = {
    "issue number": re.compile(r"(?<![A-Za-z])[Ii]ssues?[ _]?#?\d+"),
    "stop number": re.compile(r"(?<![A-Za-z])[Ss]tops?[ _]\d+"),
    "session number": re.compile(r"(?<![A-Za-z])[Ss]essions?[ _]\d+(?!\d)"),
    "goal number": re.compile(r"(?<![A-Za-z])goals?[ _]\d+(?!\d)"),
    "development machine": re.compile(
        r"\bthis workplace\b|\bwork sessions?\b|\b(?:the shared|this) \d+-core\b"
        r"|\bother (?:sessions|agents|helpers)\b|\b(?:previous|earlier) session\b",
        re.IGNORECASE,
    ),
}

# Text that looks like a label and is a citation: cut out of a line before the labels are looked for.
CITATIONS = re.compile(
    r"\b[Vv]ol(?:ume|\.)?\s*\d+\s*,\s*(?:[Nn]o\.|[Ii]ssue)\s*\d+"
    r"|\b(?:GitHub|upstream|Django|CPython|Python|Chromium|PostgreSQL)'?s? issue\s*#?\d+",
)


def labels_in(text: str) -> list[tuple[int, str, str]]:
    """Each label in ``text``: (line number, kind, the matched text)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = CITATIONS.sub(" ", line)
        for kind, pattern in LABELS.items():
            found.extend((number, kind, m.group(0)) for m in pattern.finditer(line))
    return found


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    files = []
    for name in filter(None, listed.split("\0")):
        path = ROOT / name
        if name.startswith(EXCLUDED_PREFIXES) or not path.is_file():
            continue
        head = path.read_bytes()[:8192]
        if b"\0" in head:
            continue  # binary
        files.append(path)
    return files


def test_no_tracked_file_names_the_development_history():
    files = tracked_text_files()
    assert len(files) > 100, "git ls-files listed too few files to mean anything"
    offenders = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text
        rel = path.relative_to(ROOT)
        offenders.extend(f"{rel}:{n}: {kind}: {hit!r}" for n, kind, hit in labels_in(text))
    assert not offenders, (
        "say what the code or page does, in product terms (history goes to CHANGELOG.md, "
        "in a user's terms):\n" + "\n".join(offenders)
    )


# The planted labels spell one letter as an escape (\x73 is "s") so that this file passes its own
# scan; the strings the test sees are the labels.
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("measured at \x73top 44 on the item path", "stop number"),
        ("(i\x73sue 13)", "issue number"),
        ("see I\x73sue 28.2: the message box", "issue number"),
        ("grown by 500 tests (i\x73sues 27–32)", "issue number"),
        ("def test_i\x73sue_28_limits():", "issue number"),
        ("the figure of \x73ession 6", "session number"),
        ("the item path (g\x6fal 2)", "goal number"),
        ("on the shared 2-\x63ore machine", "development machine"),
        ("in this work\x70lace, with the search tool", "development machine"),
        ("while other \x73essions ran", "development machine"),
        ("an earlier \x73ession measured 75%", "development machine"),
    ],
)
def test_a_planted_label_is_found(text, kind):
    assert [k for _, k, _ in labels_in(text)] == [kind]


@pytest.mark.parametrize(
    "text",
    [
        "Journal of Things, Volume 3, Issue 2, pp. 10-20",
        "J. Proc. Vol. 12, No. 4",
        "a workaround for GitHub issue #1234 in the client",
        "Goal 3: bake the bread",
        "the participant's SESSION_ID",
        "measured on 2 CPU cores, 24 GiB",
        "Logical or Structural Issues",
        "the worker stopped 3 chunks",
        "an issue with the config",
        "seed 000 §4.3",
        "a study session in progress",
    ],
)
def test_ordinary_text_is_no_label(text):
    assert labels_in(text) == []
