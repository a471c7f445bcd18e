"""LongProc (seed 001, notes §1.2): rule-based scorers for long procedural outputs. Pure: no Django.

- the answer read out of the model's text by :mod:`benchmarks.packs.longproc_answers` (tags,
  a fenced ```` ```tsv ```` block, ``<think>`` content kept), QA-normalised;
- exact match of the whole trace (Path Traversal, ToM Tracking), with an entry-aligned breakdown;
- row-level F1 for HTML→TSV ([FLAG] multiset, header excluded, order ignored by default);
- the Countdown and Travel Planning validators (:mod:`benchmarks.packs.longproc_validators`);
- termination: ``term`` (share of generations whose ``finish_reason`` says the model stopped by
  itself within the budget) and ``acc/term`` (accuracy among those), Table 5.

Pseudocode→Code is not a pack here: it is scored by running the SPoC unit tests on the
generated C++, which is not a rule on the text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from benchmarks.packs.longproc_answers import (
    entries,
    extract_fenced,
    extract_tagged,
    extract_tom_trace,
    normalize,
    searched_text,
)
from benchmarks.packs.longproc_validators import (
    cities_from,
    parse_travel_problem,
    validate_countdown,
    validate_travel,
)
from benchmarks.packs.registry import (
    PackScorer,
    RecordError,
    Scored,
    json_type,
    mean_summary,
    register,
    require_field,
)

# finish_reason values meaning "the model emitted EOS / stopped by itself within the budget"
# (OpenAI and vLLM say "stop"; Anthropic "end_turn" / "stop_sequence"); "length" and anything
# else count as not terminated; an absent or null finish_reason is unknown (left out of term).
TERMINATED_REASONS = ("stop", "end_turn", "stop_sequence", "eos")


# --- exact trace match (Path Traversal, ToM Tracking) --------------------------------------------


def trace_match(gold: str, answer: str | None) -> Scored:
    """``correct`` = 1 iff normalise(answer) == normalise(gold) (the whole trace, Y = Y*); the
    breakdown aligns entries (lines) and names the first divergent one (1-based)."""
    if answer is None:
        gold_entries = entries(gold)
        return Scored(
            {"correct": 0},
            {"extracted": False, "n_gold": len(gold_entries), "n_pred": 0, "first_divergence": 1},
        )
    correct = int(normalize(answer) == normalize(gold))
    g, p = entries(gold), entries(answer)
    first = next((i + 1 for i, (a, b) in enumerate(zip(g, p, strict=False)) if a != b), None)
    if first is None and len(g) != len(p):
        first = min(len(g), len(p)) + 1
    if correct:
        first = None
    breakdown = {"extracted": True, "n_gold": len(g), "n_pred": len(p), "first_divergence": first}
    return Scored({"correct": correct}, breakdown)


# --- row-level F1 (HTML→TSV) ---------------------------------------------------------------------


def tsv_rows(text: str, *, header: str = "exclude") -> list[tuple[str, ...]]:
    """Rows of a TSV block, each cell normalised; blank lines skipped; the first row dropped
    when ``header`` is ``exclude``."""
    rows = [
        tuple(normalize(cell) for cell in line.split("\t"))
        for line in text.splitlines()
        if line.strip()
    ]
    return rows[1:] if header == "exclude" else rows


def row_f1(
    gold_rows: Sequence[tuple[str, ...]],
    pred_rows: Sequence[tuple[str, ...]],
    *,
    matching: str = "multiset",
) -> dict[str, float | int]:
    """A predicted row is correct iff every column equals a gold row's (already normalised);
    P = correct / predicted, R = correct / gold, F1 = 2PR / (P + R). ``matching`` ([FLAG]):
    ``multiset`` (default: each gold row matches at most one predicted row, so a row
    repeated twice counts once unless the gold has it twice) or ``set`` (duplicates collapse
    on both sides). Order is ignored. Both empty → 1; one side empty → 0."""
    if matching == "set":
        gold_rows, pred_rows = list(dict.fromkeys(gold_rows)), list(dict.fromkeys(pred_rows))
    correct = sum((Counter(gold_rows) & Counter(pred_rows)).values())
    if not gold_rows and not pred_rows:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0, "correct_rows": 0}
    p = correct / len(pred_rows) if pred_rows else 0.0
    r = correct / len(gold_rows) if gold_rows else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f1, "correct_rows": correct}


# --- termination and aggregation ----------------------------------------------------------------


def terminated(finish_reason: Any, reasons: Sequence[str] = TERMINATED_REASONS) -> int | None:
    """1 if the generation ended by itself, 0 if cut off (``length``…), None when unknown."""
    if finish_reason is None:
        return None
    return int(str(finish_reason).strip().lower() in reasons)


def termination_summary(
    rows: Iterable[Mapping[str, Any]], metric: str = "correct"
) -> dict[str, Any]:
    """``acc`` (mean of ``metric`` over every row), ``term`` (share of rows with
    ``terminated`` = 1 among rows where it is known) and ``acc_term`` (mean of ``metric``
    among terminated rows), Table 5; ``n`` rows, ``n_term_known`` rows with a finish_reason."""
    rows = list(rows)
    scored = [float(r[metric]) for r in rows if r.get(metric) is not None]
    known = [r for r in rows if r.get("terminated") is not None]
    done = [r for r in known if r["terminated"] and r.get(metric) is not None]
    return {
        "acc": sum(scored) / len(scored) if scored else None,
        "term": sum(1 for r in known if r["terminated"]) / len(known) if known else None,
        "acc_term": sum(float(r[metric]) for r in done) / len(done) if done else None,
        "n": len(rows),
        "n_term_known": len(known),
    }


def level_average(task_scores: Mapping[str, float]) -> float:
    """A level's average: the mean of the task scores (100 × mean per task) available at that
    level (5 tasks at 0.5K and 8K, 6 at 2K)."""
    return sum(task_scores.values()) / len(task_scores)


# --- the packs ----------------------------------------------------------------------------------


def _text(record: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    if not required and record.get(name) is None:
        return None
    return require_field(record, name, str, "a string")


def answer_or_whole(answer: str | None, raw: str, fallback: str) -> str | None:
    """``fallback``: ``none`` (default, as the paper: no tagged answer → nothing to score) or
    ``whole`` (no tagged answer → the whole text; for people solving an item in a study, who
    type just the answer)."""
    if fallback not in ("none", "whole"):
        raise ValueError("fallback must be 'none' or 'whole'")
    return raw if answer is None and fallback == "whole" else answer


def check_terminated_reasons(reasons: Sequence[str]) -> None:
    """The ``terminated_reasons`` option must be a list of finish_reason strings."""
    if isinstance(reasons, str) or not all(isinstance(r, str) for r in reasons):
        raise ValueError("terminated_reasons must be a list of finish_reason strings")


def add_terminated(
    metrics: dict[str, Any], record: Mapping[str, Any], reasons: Sequence[str]
) -> None:
    """``terminated`` (1, 0 or None: :func:`terminated`) into ``metrics`` when the record has a
    ``finish_reason`` (a string or null)."""
    check_terminated_reasons(reasons)
    if "finish_reason" in record:
        reason = record["finish_reason"]
        if reason is not None and not isinstance(reason, str):
            raise RecordError(
                f"must be a string or null, got {json_type(reason)}", field="finish_reason"
            )
        metrics["terminated"] = terminated(reason, reasons)


def summary_with_termination(
    metrics: Sequence[str],
) -> Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]:
    """Means of the metrics and ``n``; with ``term`` and ``acc_term`` (on the first metric)
    when some rows carry a finish_reason."""

    def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        out = mean_summary(tuple(metrics), rows)
        if any(r.get("terminated") is not None for r in rows):
            t = termination_summary(rows, metrics[0])
            out.update(term=t["term"], acc_term=t["acc_term"])
        return out

    return summarize


def score_countdown(
    record: Mapping[str, Any],
    *,
    occurrence: str = "last",
    think: str = "keep",
    fallback: str = "none",
    max_intermediate: int | None = None,
    terminated_reasons: Sequence[str] = TERMINATED_REASONS,
) -> Scored:
    """``{"id", "numbers": [...], "target": n, "prediction": raw, "finish_reason"?}`` →
    ``correct``."""
    if max_intermediate is not None and (
        isinstance(max_intermediate, bool) or not isinstance(max_intermediate, int)
    ):
        raise ValueError("max_intermediate must be an integer or null")
    numbers = require_field(record, "numbers", list, "an array of integers")
    if not numbers or any(isinstance(n, bool) or not isinstance(n, int) for n in numbers):
        raise RecordError("must be a non-empty array of integers", field="numbers")
    target = require_field(record, "target", int, "an integer")
    raw = _text(record, "prediction")
    solution = answer_or_whole(
        extract_tagged(raw, "Solution", occurrence=occurrence, think=think), raw, fallback
    )
    ok, breakdown = validate_countdown(solution, numbers, target, max_intermediate=max_intermediate)
    metrics: dict[str, Any] = {"correct": int(ok)}
    add_terminated(metrics, record, terminated_reasons)
    return Scored(metrics, breakdown)


def score_travel(
    record: Mapping[str, Any],
    *,
    occurrence: str = "last",
    think: str = "keep",
    fallback: str = "none",
    terminated_reasons: Sequence[str] = TERMINATED_REASONS,
) -> Scored:
    """``{"id", "total_days", "cities": [{"name", "days", "fixed"?: [a, b]}], "flights":
    [["From", "To"], …], "prediction": raw, "finish_reason"?}`` → ``correct``; instead of the
    three constraint fields, ``"problem"`` may hold the problem text (parsed by
    :func:`parse_travel_problem`)."""
    if "cities" not in record and "problem" in record:
        problem = require_field(record, "problem", str, "the problem text")
        try:
            total, cities, pairs = parse_travel_problem(problem)
        except ValueError as exc:
            raise RecordError(str(exc), field="problem") from None
        flights = [list(p) for p in pairs]
    else:
        total = require_field(record, "total_days", int, "a positive integer")
        try:
            cities = cities_from(record.get("cities"))
        except ValueError as exc:
            raise RecordError(str(exc), field="cities") from None
        flights = require_field(record, "flights", list, "an array of [from, to] pairs")
    if not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(c, str) for c in f) for f in flights
    ):
        raise RecordError("every entry must be a pair [from, to] of city names", field="flights")
    raw = _text(record, "prediction")
    plan = answer_or_whole(
        extract_tagged(raw, "Plan", occurrence=occurrence, think=think), raw, fallback
    )
    ok, breakdown = validate_travel(
        plan, total_days=total, cities=cities, flights=[tuple(f) for f in flights]
    )
    metrics: dict[str, Any] = {"correct": int(ok)}
    add_terminated(metrics, record, terminated_reasons)
    return Scored(metrics, breakdown)


def _trace_scorer(extract: Callable[..., str | None]):
    def score(
        record: Mapping[str, Any],
        *,
        occurrence: str = "last",
        think: str = "keep",
        fallback: str = "none",
        terminated_reasons: Sequence[str] = TERMINATED_REASONS,
    ) -> Scored:
        gold = _text(record, "gold")
        raw = _text(record, "prediction")
        gold_answer = extract(gold, occurrence=occurrence, think="keep") or gold
        answer = answer_or_whole(extract(raw, occurrence=occurrence, think=think), raw, fallback)
        scored = trace_match(gold_answer, answer)
        add_terminated(scored.metrics, record, terminated_reasons)
        return scored

    return score


def _route(text, *, occurrence, think):
    return extract_tagged(text, "Route", occurrence=occurrence, think=think)


def _tom(text, *, occurrence, think):
    return extract_tom_trace(searched_text(text, occurrence=occurrence, think=think))


def score_html_to_tsv(
    record: Mapping[str, Any],
    *,
    header: str = "exclude",
    matching: str = "multiset",
    occurrence: str = "last",
    think: str = "keep",
    terminated_reasons: Sequence[str] = TERMINATED_REASONS,
) -> Scored:
    """``{"id", "gold": TSV text (header row first, fenced or not), "prediction": raw}`` →
    ``f1``, ``precision``, ``recall``."""
    if header not in ("exclude", "include"):
        raise ValueError("header must be 'exclude' or 'include'")
    if matching not in ("multiset", "set"):
        raise ValueError("matching must be 'multiset' or 'set'")
    gold = _text(record, "gold")
    raw = _text(record, "prediction")
    gold_tsv = extract_fenced(gold, "tsv", occurrence=occurrence) or gold
    block = extract_fenced(raw, "tsv", occurrence=occurrence, think=think)
    gold_rows = tsv_rows(gold_tsv, header=header)
    pred_rows = tsv_rows(block, header=header) if block is not None else []
    result = row_f1(gold_rows, pred_rows, matching=matching)
    metrics: dict[str, Any] = {k: result[k] for k in ("f1", "precision", "recall")}
    add_terminated(metrics, record, terminated_reasons)
    breakdown = {
        "extracted": block is not None,
        "gold_rows": len(gold_rows),
        "predicted_rows": len(pred_rows),
        "correct_rows": result["correct_rows"],
    }
    return Scored(metrics, breakdown)


_COMMON = {"occurrence": "last", "think": "keep", "terminated_reasons": list(TERMINATED_REASONS)}
_TAGGED = {"fallback": "none"}

for _name, _fn, _metrics, _extra, _desc in [
    (
        "longproc-countdown",
        score_countdown,
        ("correct",),
        {**_TAGGED, "max_intermediate": None},
        'in {"id", "numbers", "target", "prediction"}; validates the <Solution> block',
    ),
    (
        "longproc-travel",
        score_travel,
        ("correct",),
        _TAGGED,
        'in {"id", "total_days", "cities", "flights", "prediction"}; validates the <Plan> block',
    ),
    (
        "longproc-path-traversal",
        _trace_scorer(_route),
        ("correct",),
        _TAGGED,
        'in {"id", "gold", "prediction"}; exact match of the normalised <Route> trace',
    ),
    (
        "longproc-tom-tracking",
        _trace_scorer(_tom),
        ("correct",),
        _TAGGED,
        'in {"id", "gold", "prediction"}; exact match of the normalised Step … Final Answer trace',
    ),
    (
        "longproc-html-to-tsv",
        score_html_to_tsv,
        ("f1", "precision", "recall"),
        {"header": "exclude", "matching": "multiset"},
        'in {"id", "gold", "prediction"}; row-level F1 of the ```tsv block',
    ),
]:
    register(
        PackScorer(
            name=_name,
            metrics=(*_metrics, "terminated"),
            score=_fn,
            description=f"LongProc {_name.removeprefix('longproc-')}: {_desc}",
            summarize=summary_with_termination(_metrics),
            options={**_COMMON, **_extra},
        )
    )
