"""Export of procedures and generations as reference-compatible JSONL records (reads only)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from benchmarks import formats
from benchmarks.models import Dataset, Generation, Generator, Procedure

CHUNK = 2000


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
        yield formats.example_record(
            source_example_id=p.source_example_id,
            topic_slug=p.topic.slug if p.topic_id else None,
            goal=p.goal,
            resources=p.resources,
            steps=p.steps,
            url=p.url,
            source_text=p.source_text,
        )


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
            "procedure__source_example_id",
            "procedure__topic__slug",
            "procedure__goal",
            "procedure__steps",
            "procedure__resources",
        )
    )
    for g in qs.iterator(chunk_size=CHUNK):
        p = g.procedure
        yield formats.generation_record(
            generator_name=generator.name,
            generator_backend=generator.backend,
            generator_model=generator.model,
            source_example_id=p.source_example_id,
            topic_slug=p.topic.slug if p.topic_id else None,
            goal=p.goal,
            steps=p.steps,
            resources=p.resources,
            model_completion=g.model_completion,
            predicted_steps=g.predicted_steps,
            token_count=g.token_count,
        )


def write_jsonl(records: Iterator[dict[str, Any]], out: TextIO) -> int:
    n = 0
    for record in records:
        out.write(formats.dumps_line(record))
        n += 1
    return n


def write_output(records: Iterator[dict[str, Any]], *, stdout: TextIO, output: str | None) -> int:
    """Write records to ``stdout``, or to ``output`` through a temporary file renamed at the end
    (an interrupted export never leaves a half-written file)."""
    if not output:
        return write_jsonl(records, stdout)
    target = Path(output)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            n = write_jsonl(records, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n
