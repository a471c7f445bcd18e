"""The D.3 / E.4 scorer summary of a generator's generations (runs store it on the run; the
``generation_scores`` command prints it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet

from benchmarks import scorers as sc
from benchmarks.models import Generation, Generator, Procedure
from benchmarks.tokens import count_steps_tokens


def generation_scores_summary(
    *,
    generator: Generator,
    procedures: QuerySet[Procedure] | None = None,
    scorer_names: Sequence[str] | None = None,
    refresh: bool = False,
) -> dict[str, Any]:
    """The scorer summary over a generator's generations (optionally within ``procedures``).
    Generations whose stored scores lack a key of these scorers (imported ones, older runs) are
    scored now and saved; ``refresh`` rescores all."""
    scorers = sc.get_scorers(scorer_names)
    qs = (
        Generation.objects.filter(generator=generator)
        .select_related("procedure")
        .defer("procedure__source_text")
    )
    if procedures is not None:
        qs = qs.filter(procedure__in=procedures)
    probe_keys: set[str] | None = None
    rows: list[dict[str, Any]] = []
    stale: list[Generation] = []
    for g in qs.order_by("pk").iterator(chunk_size=2000):
        if probe_keys is None:
            probe_keys = set(
                sc.score_example(
                    sc.ScoreInput(predicted_steps=["a"], reference_steps=["a"], completion="1. a"),
                    scorers,
                )
            )
        if refresh or not probe_keys <= set(g.scores or {}):
            item = sc.ScoreInput(
                predicted_steps=g.predicted_steps or [],
                reference_steps=g.procedure.steps or [],
                completion=g.model_completion or None,
                gen_tokens=g.token_count,
            )
            g.scores = {**(g.scores or {}), **sc.score_example(item, scorers)}
            if g.token_count is None:
                g.token_count = int(
                    g.scores.get("gen_tokens") or count_steps_tokens(g.predicted_steps or [])
                )
            stale.append(g)
        rows.append(g.scores)
    if stale:
        Generation.objects.bulk_update(stale, ["scores", "token_count"], batch_size=500)
    summary = sc.summarize(rows, scorers)
    summary["generator"] = generator.name
    return summary
