"""Reading a LongProc answer (seed 001, notes §1.2) out of a model's text. Pure: no Django.

- extraction by tags (``<Route>``, ``<Plan>``, ``<Solution>``), by a fenced ```` ```tsv ````
  block, or as ToM Tracking's untagged ``Step k:`` trace; ``<think>`` content is kept by
  default (reasoning models sometimes write the formatted answer inside their thinking; the
  paper does not strip it);
- QA normalisation (lowercase, punctuation removed, whitespace collapsed) and a trace's entries.

Used by the packs' scorers (:mod:`benchmarks.packs.longproc`), the segment analysis
(:mod:`benchmarks.packs.longproc_segments`) and the generation protocols
(:mod:`benchmarks.packs.protocols.longproc`).
"""

from __future__ import annotations

import re
import unicodedata

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def check_extraction(occurrence: str, think: str) -> None:
    """Refuse an ``occurrence`` other than ``last``/``first``, a ``think`` other than
    ``keep``/``strip``."""
    if occurrence not in ("last", "first"):
        raise ValueError("occurrence must be 'last' or 'first'")
    if think not in ("keep", "strip"):
        raise ValueError("think must be 'keep' or 'strip'")


def searched_text(text: str | None, *, occurrence: str, think: str) -> str | None:
    """The text an answer is looked for in, after checking the options: with ``think``
    ``strip``, ``<think>…</think>`` removed (an unclosed one to the end); else as it is."""
    check_extraction(occurrence, think)
    if text is not None and think == "strip":
        text = _THINK.sub("", text)
    return text


def extract_tagged(
    text: str | None, tag: str, *, occurrence: str = "last", think: str = "keep"
) -> str | None:
    """The content of ``<tag>…</tag>`` (case-insensitive, spaces in the tag name flexible), or
    None when there is no closed block. ``occurrence`` ``last`` (default: the answer a model
    gives after drafting it) or ``first``. ``think`` ``keep`` (default, as the paper) searches
    ``<think>`` content too; ``strip`` removes ``<think>…</think>`` first."""
    text = searched_text(text, occurrence=occurrence, think=think)
    if text is None:
        return None
    name = r"\s+".join(re.escape(part) for part in tag.split())
    return _pick(
        re.findall(rf"<\s*{name}\s*>(.*?)<\s*/\s*{name}\s*>", text, re.S | re.I), occurrence
    )


def extract_fenced(
    text: str | None, lang: str = "tsv", *, occurrence: str = "last", think: str = "keep"
) -> str | None:
    """The content of a closed ```` ```lang ```` fenced block (same options as
    :func:`extract_tagged`)."""
    text = searched_text(text, occurrence=occurrence, think=think)
    if text is None:
        return None
    blocks = re.findall(rf"```[ \t]*{re.escape(lang)}[ \t]*\n(.*?)```", text, re.S | re.I)
    return _pick(blocks, occurrence)


def _pick(blocks: list[str], occurrence: str) -> str | None:
    if not blocks:
        return None
    return blocks[-1] if occurrence == "last" else blocks[0]


def normalize(text: str, *, articles: bool = False) -> str:
    """Standard QA normalisation (notes §1.2): lowercase, remove punctuation (every Unicode
    punctuation character), collapse whitespace. ``articles=True`` also drops a/an/the, as
    the SQuAD script does; the paper lists only the three steps, so it is off by default."""
    text = "".join(
        " " if ch.isspace() else ch
        for ch in text.lower()
        if not unicodedata.category(ch).startswith("P")
    )
    words = text.split()
    if articles:
        words = [w for w in words if w not in ("a", "an", "the")]
    return " ".join(words)


def entries(text: str) -> list[str]:
    """A trace's entries: its non-blank lines, normalised."""
    return [n for n in (normalize(line) for line in text.splitlines()) if n]


_TOM_STEP = re.compile(r"^\W*step\s*(\d+)\s*:", re.I)
_TOM_FINAL = re.compile(r"^\W*final\s+answer\s*:", re.I)


def extract_tom_trace(text: str | None) -> str | None:
    """ToM Tracking's trace has no tags: the ``- Step k: …`` lines from the last ``Step 1:`` on,
    up to and including the first ``Final Answer: …`` line after it (None when absent)."""
    if text is None:
        return None
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if (m := _TOM_STEP.match(line)) and m[1] == "1"]
    if not starts:
        return None
    kept = []
    for line in lines[starts[-1] :]:
        if _TOM_STEP.match(line):
            kept.append(line)
        elif _TOM_FINAL.match(line):
            kept.append(line)
            break
    return "\n".join(kept)
