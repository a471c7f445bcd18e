"""SciRecipe / Thoth: the SCORE scorer pack (gates, step scale, order, anchors, semantics), its
five evaluation metrics and the lexical ones (BLEU-1..4, ROUGE-L, KW-F1); registers the
``scirecipe`` pack on import. Pure: no Django imports.

Modules: :mod:`.options` (every [FLAG] choice, named, with its default), :mod:`.parsing` (format
and consistency gates), :mod:`.metrics` (the parts), :mod:`.lexical` (text against the reference
text), :mod:`.scorer` (one item, the record shape).
"""

from __future__ import annotations

from dataclasses import asdict

from benchmarks.packs.registry import PackScorer, register
from benchmarks.packs.scirecipe.options import DEFAULT_OPTIONS, ScoreOptions
from benchmarks.packs.scirecipe.parsing import Step, parse_answer
from benchmarks.packs.scirecipe.scorer import (
    METRICS,
    Prediction,
    score_record,
    score_steps,
    summarize,
)

SCORER = register(
    PackScorer(
        name="scirecipe",
        metrics=METRICS,
        score=score_record,
        options=asdict(DEFAULT_OPTIONS),
        summarize=summarize,
        description=(
            "SciRecipe SCORE (Thoth): format and consistency gates, step scale, strict/LCS order, "
            "greedy action anchors with positional decay, object/parameter IoU; Step-M, Order-S, "
            "Order-LCS, Order-Tau, Semantic-A; BLEU-1..4, ROUGE-L (and KW-F1) against reference_text."
        ),
    )
)

__all__ = [
    "DEFAULT_OPTIONS",
    "METRICS",
    "SCORER",
    "Prediction",
    "ScoreOptions",
    "Step",
    "parse_answer",
    "score_record",
    "score_steps",
]
