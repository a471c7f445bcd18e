"""Export of procedures and generations as reference-compatible JSONL records (reads only;
written out by :func:`core.streaming.write_lines`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from benchmarks import formats
from benchmarks.models import Dataset, Generation, Generator, Procedure

CHUNK = 2000


def _procedure_fields(p: Procedure) -> dict[str, Any]:
    """What example and generation records both carry of a procedure."""
    return {
        "source_example_id": p.source_example_id,
        "topic_slug": p.topic.slug if p.topic_id else None,
        "goal": p.goal,
        "resources": p.resources,
        "steps": p.steps,
    }


def procedure_records(*, dataset: Dataset) -> Iterator[dict[str, Any]]:
    """``how2bench.example.v1`` records of a dataset, in import order."""
    qs = (
        Procedure.objects.filter(dataset=dataset)
        .select_related("topic")
        .order_by("id")
        .only(
            "source_example_id", "topic__slug", "goal", "resources", "steps", "url", "source_text"
        )
    )
    for p in qs.iterator(chunk_size=CHUNK):
        yield formats.example_record(**_procedure_fields(p), url=p.url, source_text=p.source_text)


def generation_records(
    *, generator: Generator, dataset: Dataset | None = None
) -> Iterator[dict[str, Any]]:
    """``how2bench.generation.v1`` records of a generator (optionally one dataset's), each carrying
    its procedure's goal, steps, resources and topic like the reference writes them."""
    qs = Generation.objects.filter(generator=generator)
    if dataset is not None:
        qs = qs.filter(procedure__dataset=dataset)
    qs = (
        qs.select_related("procedure", "procedure__topic")
        .order_by("procedure_id")
        .only(
            "model_completion",
            "predicted_steps",
            "token_count",
            "finish_reason",
            "prompt_tokens",
            "completion_tokens",
            "procedure__source_example_id",
            "procedure__topic__slug",
            "procedure__goal",
            "procedure__steps",
            "procedure__resources",
        )
    )
    for g in qs.iterator(chunk_size=CHUNK):
        yield formats.generation_record(
            **_procedure_fields(g.procedure),
            generator_name=generator.name,
            generator_backend=generator.backend,
            generator_model=generator.model,
            model_completion=g.model_completion,
            predicted_steps=g.predicted_steps,
            token_count=g.token_count,
            finish_reason=g.finish_reason,
            prompt_tokens=g.prompt_tokens,
            completion_tokens=g.completion_tokens,
        )
