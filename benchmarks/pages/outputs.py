"""What the long-output viewer shows: a generation against its procedure's reference, aligned
entry by entry (``generation_output_page``), and the CustomPlans step diff of the original
steps against the customized ones (``generation_step_diff_page``). Reads only; the alignment
itself is pure (:mod:`benchmarks.packs.diffing`).

Stop reason and token counts are shown when the generation has them (imports may not)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from django.shortcuts import get_object_or_404

from benchmarks.models import Generation
from benchmarks.packs import customplans, diffing, scirecipe

MODES = ("steps", "lines")
MAX_ENTRIES = 10_000  # per side; beyond this the page aligns the first entries and says so
FOLD_CONTEXT = 3
FOLD_MIN_RUN = 10


@dataclass
class DisplayRow:
    pos: int
    kind: str
    left_index: int | None
    right_index: int | None
    left: list[tuple[str, str]]
    right: list[tuple[str, str]]
    first: bool


def entry_text(entry: Any) -> str:
    """A step as one line: strings as they are; SciRecipe's structured steps as
    ``action · objects · parameters``; anything else as compact JSON."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and "action" in entry:
        parts = [str(entry.get("action", ""))]
        for key in ("objects", "parameters"):
            value = entry.get(key) or []
            parts.append(
                ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
            )
        return " · ".join(p for p in parts if p)
    return json.dumps(entry, ensure_ascii=False, separators=(",", ": "))


def raw_output(generation: Generation) -> str:
    """The model's raw output as stored (empty for imports that carried none)."""
    return generation.model_completion or ""


def predicted_entries(generation: Generation, raw: str) -> list[str]:
    """The prediction's steps: the parsed ``predicted_steps``, else the structured steps of a
    SciRecipe answer's ``<key>`` block in the raw output (``Step x: {json}`` lines)."""
    if generation.predicted_steps:
        return [entry_text(s) for s in generation.predicted_steps]
    if "<key>" in raw.lower():
        steps = scirecipe.parse_answer(raw).steps
        return [entry_text(asdict(s)) for s in steps]
    return []


def _generation(pk: int) -> Generation:
    return get_object_or_404(
        Generation.objects.select_related("procedure__dataset", "generator"), pk=pk
    )


def _display(alignment: diffing.Alignment) -> list[diffing.Segment]:
    """Fold the rows and turn each into a :class:`DisplayRow` (word highlight on changed rows)."""
    segments = diffing.fold(alignment.rows, context=FOLD_CONTEXT, min_run=FOLD_MIN_RUN)
    for seg in segments:
        shown = []
        for k, row in enumerate(seg.rows):
            pos = seg.first_row + k
            if row.kind == diffing.CHANGED:
                left, right = diffing.inline_diff(row.left, row.right)
            else:
                left = [(row.kind, row.left)] if row.left_index else []
                right = [(row.kind, row.right)] if row.right_index else []
            shown.append(
                DisplayRow(
                    pos,
                    row.kind,
                    row.left_index,
                    row.right_index,
                    left,
                    right,
                    pos == alignment.first_divergence,
                )
            )
        seg.rows = shown  # type: ignore[assignment]
    return segments


def _meta(generation: Generation) -> list[tuple[str, Any]]:
    meta = [("Generator", generation.generator.name)]
    if generation.generator.model and generation.generator.model != generation.generator.name:
        meta.append(("Model", generation.generator.model))
    for label, attr in (
        ("Finish reason", "finish_reason"),
        ("Tokens", "token_count"),
        ("Prompt tokens", "prompt_tokens"),
        ("Completion tokens", "completion_tokens"),
    ):
        value = getattr(generation, attr)
        if value not in (None, ""):
            meta.append((label, value))
    return meta


def generation_output_page(*, pk: int, mode: str | None = None) -> dict[str, Any]:
    """Gold (the procedure's reference steps) against the prediction: the parsed steps
    (``steps``; a SciRecipe answer's ``<key>`` steps when nothing was parsed) or the raw output
    split into lines (``lines``). With no mode asked, steps when there are any, else lines."""
    generation = _generation(pk)
    procedure = generation.procedure
    raw = raw_output(generation)
    predicted = predicted_entries(generation, raw)
    if mode not in MODES:
        mode = "steps" if predicted or not raw else "lines"
    gold = [entry_text(s) for s in procedure.steps or []]
    prediction = predicted if mode == "steps" else diffing.split_lines(raw)
    truncated = max(len(gold), len(prediction)) > MAX_ENTRIES
    alignment = diffing.align(gold[:MAX_ENTRIES], prediction[:MAX_ENTRIES])
    return {
        "generation": generation,
        "procedure": procedure,
        "mode": mode,
        "modes": [(m, m == mode) for m in MODES],
        "has_raw": bool(raw),
        "has_steps": bool(predicted),
        "meta": _meta(generation),
        "n_gold": len(gold),
        "n_prediction": len(prediction),
        "truncated": truncated,
        "max_entries": MAX_ENTRIES,
        "alignment": alignment,
        "segments": _display(alignment),
        "first_divergence_row": None
        if alignment.first_divergence is None
        else alignment.first_divergence + 1,
    }


def generation_step_diff_page(*, pk: int) -> dict[str, Any]:
    """CustomPlans: the original steps (the procedure's) against the customized ones. When the
    output holds edit calls (``replace(k, …)``, ``insert(k, …)``, ``delete(k)``) they are
    applied and shown edit by edit (bad edits listed, not applied); otherwise the predicted
    steps are aligned with the original."""
    generation = _generation(pk)
    procedure = generation.procedure
    original = [entry_text(s) for s in procedure.steps or []]
    edits = customplans.parse_edit_calls(raw_output(generation))
    dropped: list[str] = []
    if edits:
        applied = customplans.apply_edits(original, edits, on_invalid="drop")
        dropped = [f"edit {p + 1} ({e}): {why}" for p, e, why in applied.dropped]
        alignment = customplans.edit_diff(original, edits, on_invalid="drop")
        source = "edits"
    else:
        customized = [entry_text(s) for s in generation.predicted_steps or []]
        alignment = customplans.step_diff(original, customized)
        source = "steps" if customized else "none"
    return {
        "generation": generation,
        "procedure": procedure,
        "meta": _meta(generation),
        "source": source,
        "edits": [str(e) for e in edits],
        "dropped": dropped,
        "alignment": alignment,
        "segments": _display(alignment),
        "hint": _hint(procedure),
        "first_divergence_row": None
        if alignment.first_divergence is None
        else alignment.first_divergence + 1,
    }


def _hint(procedure: Any) -> str:
    """The customization hint, where the procedure carries one (a field or metadata key)."""
    for attr in ("hint", "customization_hint"):
        value = getattr(procedure, attr, None)
        if isinstance(value, str) and value:
            return value
    metadata = getattr(procedure, "metadata", None)
    if isinstance(metadata, dict):
        value = metadata.get("hint") or metadata.get("customization_hint")
        if isinstance(value, str):
            return value
    return ""
