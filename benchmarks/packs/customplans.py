"""CustomPlans (Lal et al., AI2): the structured edit object (insert / replace / delete anchored
to the *original* step index), a deterministic applier, the step diff (original vs customized)
and the human-judgment aggregation (majority per question, FullyCorrect = both majorities).
Registers the ``customplans`` pack on import. Pure: no Django imports.

Applier rules (the paper leaves the edge cases open, [FLAG] in the seed notes §2.1): walk the
original steps 1…N; for step k emit its replacement (nothing when it is deleted or replaced
with ""), then the inserts anchored at k in the order given; ``insert(0, …)`` prepends. A step
replaced twice, or an index outside 0…N (inserts) / 1…N (replace, delete), is an
:class:`EditError` naming the edit (``on_invalid="error"``, the default), or is dropped and
reported (``on_invalid="drop"``, what the paper's Resolve agent is meant to do).

Record for ``manage.py score customplans FILE``::

    {"id": "c1", "steps": ["…", …],                     # optional: the original procedure
     "edits": [{"op": "replace", "index": 2, "text": "…"}, …] | "replace(2, …)\\ninsert(3, …)",
     "ratings": [{"q1": "yes", "q2": ["missing", "vague"]}, …]}

Option ``on_invalid`` (``drop``, the default, as the notes' recommended applier and the paper's
Resolve agent; or ``error``). Out: ``executable``, ``customized``, ``fully_correct`` (0/1 by majority of the ratings; absent
ratings give ``None``), ``n_edits`` and ``n_steps_out`` when steps and edits are given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.packs import diffing
from benchmarks.packs.registry import PackScorer, RecordError, Scored, mean_summary, register

OPS = ("insert", "replace", "delete")
ERROR_TYPES = ("changed", "missing", "deleted", "vague")
QUESTIONS = {"q1": "executable", "q2": "customized"}  # Q1 executability, Q2 customization


class EditError(ValueError):
    """An edit that cannot be applied; the message names the edit by its position."""


@dataclass(frozen=True)
class Edit:
    op: str
    index: int
    text: str = ""

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise EditError(f"op must be one of {', '.join(OPS)}; got {self.op!r}")
        if self.op == "replace" and not self.text.strip():
            object.__setattr__(self, "op", "delete")  # replace(k, "") deletes step k
            object.__setattr__(self, "text", "")

    def __str__(self) -> str:
        return (
            f"delete({self.index})"
            if self.op == "delete"
            else f'{self.op}({self.index}, "{self.text}")'
        )


@dataclass
class Applied:
    steps: list[str]
    dropped: list[tuple[int, Edit, str]]  # (position in the edit list, edit, why)


def edits_from_json(value: Any, where: str = "edits") -> list[Edit]:
    """A JSON list of ``{"op", "index", "text"}`` → edits; ``EditError`` names ``where[k].field``."""
    if not isinstance(value, list):
        raise EditError(f"{where}: must be a list of edits")
    out: list[Edit] = []
    for k, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise EditError(f"{where}[{k}]: must be an object with op, index, text")
        op, index, text = item.get("op"), item.get("index"), item.get("text", "")
        if op not in OPS:
            raise EditError(f"{where}[{k}].op: must be one of {', '.join(OPS)}")
        if isinstance(index, bool) or not isinstance(index, int):
            raise EditError(f"{where}[{k}].index: must be an integer step number")
        if not isinstance(text, str):
            raise EditError(f"{where}[{k}].text: must be a string")
        if op == "insert" and not text.strip():
            raise EditError(f"{where}[{k}].text: an insert needs the new step's text")
        out.append(Edit(op, index, text.strip()))
    return out


_CALL = re.compile(r"\b(insert|replace|delete)\s*\(\s*(\d+)\s*(?:,\s*(.*?))?\)\s*[.;,]?\s*$", re.I)


def parse_edit_calls(text: str) -> list[Edit]:
    """Edits written as calls, one a line (``replace(3, "Use a pan.")``, ``insert(2, Boil)``,
    ``delete(4)``), as the Modify/Verify/Resolve prompts ask; other lines are ignored.
    Quotes around the text are optional."""
    edits: list[Edit] = []
    for line in text.splitlines():
        m = _CALL.search(line.strip())
        if not m:
            continue
        op, index, arg = m.group(1).lower(), int(m.group(2)), (m.group(3) or "").strip()
        if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "\"'":
            arg = arg[1:-1]
        if op == "insert" and not arg:
            continue
        edits.append(Edit(op, index, arg))
    return edits


def apply_edits(
    steps: Sequence[str], edits: Sequence[Edit], *, on_invalid: str = "error"
) -> Applied:
    """Apply edits to the original steps deterministically (module docstring for the rules)."""
    if on_invalid not in ("error", "drop"):
        raise ValueError("on_invalid must be 'error' or 'drop'")
    n = len(steps)
    replaced: dict[int, Edit] = {}
    inserts: dict[int, list[str]] = {}
    dropped: list[tuple[int, Edit, str]] = []

    def reject(pos: int, edit: Edit, why: str) -> None:
        if on_invalid == "error":
            raise EditError(f"edit {pos + 1} ({edit}): {why}")
        dropped.append((pos, edit, why))

    for pos, edit in enumerate(edits):
        if edit.op == "insert":
            if not 0 <= edit.index <= n:
                reject(pos, edit, f"insert index must be between 0 and {n}")
                continue
            inserts.setdefault(edit.index, []).append(edit.text)
        else:
            if not 1 <= edit.index <= n:
                reject(pos, edit, f"step index must be between 1 and {n}")
                continue
            if edit.index in replaced:
                reject(pos, edit, f"step {edit.index} is already {replaced[edit.index].op}d")
                continue
            replaced[edit.index] = edit
    out: list[str] = list(inserts.get(0, []))
    for k, step in enumerate(steps, start=1):
        edit = replaced.get(k)
        if edit is None:
            out.append(step)
        elif edit.op == "replace":
            out.append(edit.text)
        out.extend(inserts.get(k, []))
    return Applied(out, dropped)


def edit_diff(
    steps: Sequence[str], edits: Sequence[Edit], *, on_invalid: str = "error"
) -> diffing.Alignment:
    """The step diff from the edits themselves: original vs customized, row by row (a replaced
    step is ``changed``, a deleted one ``deleted``, an insert ``inserted``)."""
    applied = apply_edits(steps, edits, on_invalid=on_invalid)
    bad = {pos for pos, _e, _w in applied.dropped}
    replaced = {e.index: e for p, e in enumerate(edits) if e.op != "insert" and p not in bad}
    inserts: dict[int, list[str]] = {}
    for p, e in enumerate(edits):
        if e.op == "insert" and p not in bad:
            inserts.setdefault(e.index, []).append(e.text)
    rows: list[diffing.Row] = []
    right = 0

    def add_inserts(k: int) -> None:
        nonlocal right
        for text in inserts.get(k, []):
            right += 1
            rows.append(diffing.Row(diffing.INSERTED, None, right, "", text))

    add_inserts(0)
    for k, step in enumerate(steps, start=1):
        edit = replaced.get(k)
        if edit is None or (edit.op == "replace" and edit.text == step):
            right += 1
            rows.append(diffing.Row(diffing.EQUAL, k, right, step, step))
        elif edit.op == "replace":
            right += 1
            rows.append(diffing.Row(diffing.CHANGED, k, right, step, edit.text))
        else:
            rows.append(diffing.Row(diffing.DELETED, k, None, step, ""))
        add_inserts(k)
    return diffing.finish(rows)


def step_diff(original: Sequence[str], customized: Sequence[str]) -> diffing.Alignment:
    """The step diff of two step lists when no edits are known (e.g. an E2E rewrite)."""
    return diffing.align(original, customized)


# --- human judgments: majority per question, FullyCorrect ----------------------------------


def answer_is_yes(answer: Any, where: str) -> bool:
    """One rater's answer to a question: ``"yes"`` (or ``["yes"]``, the study form's shape) or
    a non-empty list of error types."""
    if isinstance(answer, str):
        answer = [answer]
    if isinstance(answer, list) and [str(a).strip().lower() for a in answer] == ["yes"]:
        return True
    if not isinstance(answer, list) or not answer:
        raise RecordError(
            f'must be "yes" or a list of error types ({", ".join(ERROR_TYPES)})', field=where
        )
    if any(str(a).strip().lower() == "yes" for a in answer):
        raise RecordError('"yes" cannot be combined with error types', field=where)
    unknown = [a for a in answer if a not in ERROR_TYPES]
    if unknown:
        raise RecordError(
            f"unknown error type {unknown[0]!r}; use {', '.join(ERROR_TYPES)}", field=where
        )
    return False


def majority_yes(answers: Sequence[bool]) -> bool:
    """Strict majority: more than half of the raters said yes (a tie is not a majority)."""
    return sum(answers) * 2 > len(answers)


def aggregate_ratings(
    ratings: Sequence[Mapping[str, Any]], where: str = "ratings"
) -> dict[str, int]:
    """Per item: ``executable`` (majority yes on Q1), ``customized`` (majority yes on Q2) and
    ``fully_correct`` = both majorities (not: a majority of raters saying yes to both), plus
    per error type, for each question, how many raters flagged it."""
    if not isinstance(ratings, list) or not ratings:
        raise RecordError("must be a non-empty list of {q1, q2} answers", field=where)
    out: dict[str, int] = {}
    for q, name in QUESTIONS.items():
        yes: list[bool] = []
        for k, r in enumerate(ratings):
            if not isinstance(r, Mapping) or q not in r:
                raise RecordError("is required", field=f"{where}[{k}].{q}")
            yes.append(answer_is_yes(r[q], f"{where}[{k}].{q}"))
            for error in ERROR_TYPES:
                flagged = not yes[-1] and error in (r[q] if isinstance(r[q], list) else [r[q]])
                out[f"{q}_{error}"] = out.get(f"{q}_{error}", 0) + int(flagged)
        out[name] = int(majority_yes(yes))
    out["fully_correct"] = int(out["executable"] and out["customized"])
    return out


def table_percentages(items: Sequence[Mapping[str, int]]) -> dict[str, float | int]:
    """Table 2 of the paper: % CUSTOMIZED / EXECUTABLE / FULLYCORRECT over items, and ``n``."""
    n = len(items)
    out: dict[str, float | int] = {
        key: (100.0 * sum(int(i[key]) for i in items) / n if n else 0.0)
        for key in ("customized", "executable", "fully_correct")
    }
    out["n"] = n
    return out


METRICS = ("executable", "customized", "fully_correct", "n_edits", "n_steps_out")


def score_record(record: Mapping[str, Any], *, on_invalid: str = "drop") -> Scored:
    """One ``customplans`` record (module docstring). ``on_invalid``: what an edit that cannot
    be applied does, ``drop`` (default; listed in the breakdown) or ``error`` (a RecordError)."""
    if on_invalid not in ("drop", "error"):
        raise ValueError("on_invalid must be one of drop, error")
    if not isinstance(record, Mapping):
        raise RecordError("expected a JSON object")
    metrics: dict[str, float | int | None] = dict.fromkeys(METRICS)
    breakdown: dict[str, Any] = {}
    if record.get("ratings") is not None:
        agg = aggregate_ratings(record["ratings"])
        metrics.update({k: agg[k] for k in ("executable", "customized", "fully_correct")})
        breakdown["error_counts"] = {k: v for k, v in agg.items() if k.startswith("q")}
    steps, raw = record.get("steps"), record.get("edits")
    if raw is not None:
        try:
            edits = parse_edit_calls(raw) if isinstance(raw, str) else edits_from_json(raw)
        except EditError as exc:
            name, _, message = str(exc).partition(": ")
            raise RecordError(message, field=name) from None
        metrics["n_edits"] = len(edits)
        if steps is not None:
            if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
                raise RecordError("must be a list of strings", field="steps")
            try:
                applied = apply_edits(steps, edits, on_invalid=on_invalid)
            except EditError as exc:
                raise RecordError(str(exc), field="edits") from None
            metrics["n_steps_out"] = len(applied.steps)
            breakdown["customized_steps"] = applied.steps
            breakdown["dropped_edits"] = [
                f"edit {p + 1} ({e}): {why}" for p, e, why in applied.dropped
            ]
    if record.get("ratings") is None and raw is None:
        raise RecordError("needs ratings, edits, or both", field="ratings")
    return Scored(metrics, breakdown)


SCORER = register(
    PackScorer(
        name="customplans",
        metrics=METRICS,
        score=score_record,
        description=(
            "CustomPlans: majority EXECUTABLE (Q1) / CUSTOMIZED (Q2) and FullyCorrect from 3 "
            "raters' answers; edits applied to the original steps."
        ),
        summarize=lambda rows: mean_summary(METRICS, rows),
        options={"on_invalid": "drop"},
    )
)
