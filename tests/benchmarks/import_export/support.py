"""What the import/export tests share: example records in each accepted shape, a JSONL writer,
the commands' output, and a snapshot of the tables an import writes."""

from __future__ import annotations

import io
import json
from pathlib import Path

from django.core.management import call_command

from benchmarks.models import Dataset, Generation, Generator, Procedure

EXAMPLES = [
    {
        "schema_version": "how2bench.example.v1",
        "source_example_id": "doc-1",
        "topic": "Food_and_Dining",  # WebOrganizer label: canonicalised to "Food & Dining"
        "goal": "Bake a sourdough loaf",
        "resources": ["starter", "flour", "water", "salt"],
        "steps": [
            "Feed the starter.",
            "Mix the dough.",
            "Proof overnight.",
            "Bake at 250 °C for 40 minutes.",
        ],
        "url": "https://example.test/bread",
        "source_text": "A long article about bread.\nWith lines — and unicode: café.",
    },
    {
        "source_example_id": "doc-2",
        "topic": "",
        "goal": "Reset a router",
        "resources": [],
        "steps": ["Unplug it.", "Wait.", "Plug it in."],
    },
    {
        "source_example": {
            "id": "doc-3",
            "topic": "science-math-tech",
            "url": "",
            "text": "physics notes",
        },
        "final_procedure": {
            "goal": "Measure g with a pendulum",
            "steps": ["Build a pendulum.", "Time 10 swings."],
            "resources": ["string"],
        },
    },
]


def write_jsonl(path: Path, records, *, raw_lines: list[str | bytes] = ()) -> Path:
    with open(path, "wb") as out:
        out.writelines(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)
        out.writelines(
            (line if isinstance(line, bytes) else line.encode()) + b"\n" for line in raw_lines
        )
    return path


def run(*args, **kwargs) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **kwargs)
    return out.getvalue()


def export(*args, **kwargs) -> list[dict]:
    return [json.loads(line) for line in run(*args, **kwargs).splitlines()]


def gens_for(ids, *, completion="1. Do it.", generator_model=None):
    out = []
    for i, sid in enumerate(ids):
        rec = {
            "source_example_id": sid,
            "predicted_steps": [f"Step one for {sid}.", "Step two."],
            "model_completion": f"{completion} {i}",
        }
        if generator_model:
            rec["generator"] = {"backend": "vllm", "provider": "", "model": generator_model}
        out.append(rec)
    return out


def snapshot():
    return (
        list(Dataset.objects.values_list("id", "name", "version")),
        list(
            Procedure.objects.order_by("id").values_list(
                "id", "source_example_id", "goal", "steps", "topic_id"
            )
        ),
        list(Generator.objects.values_list("id", "name")),
        list(
            Generation.objects.order_by("id").values_list(
                "id", "predicted_steps", "model_completion", "token_count"
            )
        ),
    )
