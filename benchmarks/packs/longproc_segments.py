"""LongProc segment analysis (seed 001 §5, Figure 4): split the gold output Y* into four even
segments Y*(1)…Y*(4); to score segment i, prefill the answer with the gold segments 1…i−1 and
score only what the model writes for segment i. Pure: no Django.

Segments are cut along the task's natural units (its entries, notes §1.1), as evenly as the
count allows (the first segments take one more when it does not divide by four):

- ``path-traversal``: the route's lines (``From X, take a … to Y.``), inside ``<Route>``;
- ``tom-tracking``: the trace's lines (``- Step k: …``, the ``Final Answer:`` line last);
- ``html-to-tsv``: the TSV's data rows (the header row is not a unit: it opens the answer).

Countdown and Travel Planning are scored by validators of the final answer, not against a gold
trace, so they have no segments (the paper shows Path Traversal and ToM Tracking).

Segment 1 is the ordinary generation (nothing prefilled). For i > 1 the answer is prefilled with
the task's opener (``<Route>``; ```` ```tsv ```` and the header row) and the gold entries of
segments 1…i−1, one a line, and the model continues it. Scoring reads the entries the model
wrote (non-blank lines, up to the closing tag or fence, after the ``Final Answer:`` line for
ToM) and compares the first k of them with segment i's k gold entries: exact match of the
normalised entries (Path, ToM: ``correct``), row-level F1 of the rows (HTML→TSV: ``f1``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.packs.longproc import row_f1
from benchmarks.packs.longproc_answers import (
    extract_fenced,
    extract_tagged,
    extract_tom_trace,
    normalize,
)
from benchmarks.packs.registry import RecordError
from core.lazy import lazy_module

np = lazy_module("numpy")  # imported on first use (web processes hold no numpy)
stats = lazy_module("scipy.stats")

N_SEGMENTS = 4
SEGMENT_TASKS = ("path-traversal", "tom-tracking", "html-to-tsv")
METRIC = {"path-traversal": "correct", "tom-tracking": "correct", "html-to-tsv": "f1"}
_NO_SEGMENTS = {
    "countdown": "Countdown is scored by a validator of its <Solution> block, not against a gold trace",
    "travel": "Travel Planning is scored by a validator of its <Plan> block, not against a gold trace",
}


class SegmentError(RecordError):
    """A record or task that cannot be cut into segments (a :class:`RecordError`: ``message``,
    ``field``)."""


def check_task(task: str) -> None:
    if task in _NO_SEGMENTS:
        raise SegmentError(
            f"{_NO_SEGMENTS[task]}; segment analysis covers {', '.join(SEGMENT_TASKS)}",
            field="task",
        )
    if task not in SEGMENT_TASKS:
        raise SegmentError(
            f"unknown task {task!r}; segment analysis covers {', '.join(SEGMENT_TASKS)}",
            field="task",
        )


@dataclass(frozen=True)
class GoldAnswer:
    """A gold output cut into units: ``opener`` (what starts the answer before its first
    entry), ``units`` (the entries, as written) and ``segments`` (four lists of units)."""

    opener: str
    units: list[str]
    segments: list[list[str]]


def split_even(units: Sequence[str], n: int = N_SEGMENTS) -> list[list[str]]:
    """``units`` in ``n`` consecutive parts as even as possible (sizes differ by at most one,
    the first parts the larger): 10 units → 3, 3, 2, 2."""
    if len(units) < n:
        raise SegmentError(f"has {len(units)} entries; {n} segments need at least {n}", "gold")
    size, extra = divmod(len(units), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(units[start:end]))
        start = end
    return out


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def gold_answer(task: str, gold: Any) -> GoldAnswer:
    """The gold output of ``task`` cut into its units and four segments (module docstring)."""
    check_task(task)
    if not isinstance(gold, str) or not gold.strip():
        raise SegmentError("must be the gold output text", field="gold")
    if task == "path-traversal":
        units = _lines(extract_tagged(gold, "Route") or gold)
        opener = "<Route>\n"
    elif task == "tom-tracking":
        units = _lines(extract_tom_trace(gold) or gold)
        opener = ""
    else:
        rows = [line for line in (extract_fenced(gold, "tsv") or gold).splitlines() if line.strip()]
        if not rows:
            raise SegmentError("has no TSV rows", field="gold")
        opener = f"```tsv\n{rows[0]}\n"
        units = rows[1:]
    return GoldAnswer(opener=opener, units=units, segments=split_even(units))


def prefix_for(answer: GoldAnswer, segment: int) -> str:
    """What is prefilled to score ``segment`` (1-based): nothing for the first, else the
    opener and the gold entries of the segments before it, each on its line."""
    if not 1 <= segment <= N_SEGMENTS:
        raise SegmentError(f"must be 1 to {N_SEGMENTS}", field="segment")
    if segment == 1:
        return ""
    before = [unit for seg in answer.segments[: segment - 1] for unit in seg]
    return answer.opener + "".join(f"{unit}\n" for unit in before)


def prefilled_messages(prompt: str, prefix: str) -> list[dict[str, str]]:
    """The chat of a segment request: the task prompt, then the prefilled answer (none for
    segment 1), which the backend asks the model to continue."""
    messages = [{"role": "user", "content": prompt}]
    if prefix:
        messages.append({"role": "assistant", "content": prefix})
    return messages


_CLOSERS = {
    "path-traversal": re.compile(r"<\s*/\s*route\s*>", re.I),
    "html-to-tsv": re.compile("```"),
}
_OPENERS = {
    "path-traversal": re.compile(r"<\s*route\s*>", re.I),
    "html-to-tsv": re.compile(r"```[ \t]*tsv[ \t]*\n", re.I),
}
_TOM_STEP1 = re.compile(r"^\W*step\s*1\s*:", re.I | re.M)
_TOM_FINAL = re.compile(r"^\W*final\s+answer\s*:.*$", re.I | re.M)


def written_entries(task: str, text: str, *, prefilled: bool) -> list[str]:
    """The entries the model wrote, as written: for a prefilled request the continuation
    itself (it goes on from the last prefilled entry); otherwise the answer after the task's
    last opener (``<Route>``, a ```` ```tsv ```` fence and its header row, the last
    ``Step 1:`` line), closed or not. The answer ends at its closer (``</Route>``, the fence,
    after the ``Final Answer:`` line)."""
    check_task(task)
    text = text or ""
    if not prefilled:
        if task == "tom-tracking":
            starts = list(_TOM_STEP1.finditer(text))
            if not starts:
                return []
            text = text[starts[-1].start() :]
        else:
            opens = list(_OPENERS[task].finditer(text))
            if not opens:
                return []
            text = text[opens[-1].end() :]
    if task == "tom-tracking":
        final = _TOM_FINAL.search(text)
        if final:
            text = text[: final.end()]
    else:
        close = _CLOSERS[task].search(text)
        if close:
            text = text[: close.start()]
    lines = [line for line in text.splitlines() if line.strip()]
    if task == "html-to-tsv" and not prefilled:
        lines = lines[1:]  # the model's own header row
    return lines


def _row(line: str) -> tuple[str, ...]:
    return tuple(normalize(cell) for cell in line.split("\t"))


def score_segment(
    task: str, answer: GoldAnswer, segment: int, output: str | None
) -> dict[str, Any]:
    """Segment ``segment``'s score for the model's ``output`` (the continuation of
    :func:`prefix_for`'s prefix): ``score`` (``correct`` 0/1 or row ``f1``), ``metric``,
    ``n_gold`` (the segment's entries), ``n_written`` (entries compared: at most n_gold),
    ``first_divergence`` (1-based within the segment; None when all match)."""
    gold = answer.segments[segment - 1]
    written = (
        written_entries(task, output, prefilled=segment > 1)[: len(gold)]
        if output is not None
        else []
    )
    if task == "html-to-tsv":
        f1 = row_f1([_row(g) for g in gold], [_row(w) for w in written])["f1"]
        score: float = float(f1)
        pairs = [(_row(g), _row(w)) for g, w in zip(gold, written, strict=False)]
    else:
        pairs = [(normalize(g), normalize(w)) for g, w in zip(gold, written, strict=False)]
        score = float(len(written) == len(gold) and all(g == w for g, w in pairs))
    first = next((i + 1 for i, (g, w) in enumerate(pairs) if g != w), None)
    if first is None and len(written) < len(gold):
        first = len(written) + 1
    return {
        "score": score,
        "metric": METRIC[task],
        "n_gold": len(gold),
        "n_written": len(written),
        "first_divergence": first,
    }


def bootstrap_ci(
    values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean (scipy); None with fewer than two values; (v, v)
    when every value is v."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    if np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    res = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def per_segment(rows: Sequence[Mapping[str, Any]], *, seed: int = 0) -> list[dict[str, Any]]:
    """Correctness per segment over rows ``{"segment": i, "score": s | None}`` (a failed
    request's score is None: counted in ``n_failed``, left out of the mean): ``segment``,
    ``n``, ``mean``, ``ci_low``, ``ci_high`` (95% bootstrap), ``n_failed``."""
    out = []
    for segment in range(1, N_SEGMENTS + 1):
        mine = [r for r in rows if r.get("segment") == segment]
        scores = [float(r["score"]) for r in mine if r.get("score") is not None]
        ci = bootstrap_ci(scores, seed=seed)
        out.append(
            {
                "segment": segment,
                "n": len(scores),
                "mean": float(np.mean(scores)) if scores else None,
                "ci_low": ci[0] if ci else None,
                "ci_high": ci[1] if ci else None,
                "n_failed": len(mine) - len(scores),
            }
        )
    return out
