"""Builders for the mining tests: corpus documents and files, finished batches, and the
procedures a promotion embeds. Plain functions, options keyword-only, as in every
tests/*/factories.py."""

from __future__ import annotations

import json

from mining.models import MiningBatch, MiningDocument

BREAD = (
    "Bake a loaf of white bread",
    [
        "Mix flour, water, yeast and salt.",
        "Knead the dough for ten minutes.",
        "Let the dough rise for an hour.",
        "Shape the loaf.",
        "Bake at 220 C for 35 minutes.",
    ],
)
BREAD_PARAPHRASE = (
    "Bake a white bread loaf",
    [
        "Combine flour, water, yeast and salt.",
        "Knead the dough ten minutes.",
        "Leave the dough to rise for one hour.",
        "Form the loaf.",
        "Bake it at 220 C for 35 minutes.",
    ],
)
TIRE = (
    "Change a flat car tire",
    [
        "Loosen the lug nuts.",
        "Jack up the car.",
        "Remove the flat tire.",
        "Mount the spare tire.",
        "Tighten the lug nuts.",
    ],
)


def doc(i: int, marker: str = "", topic: str = "Food & Dining", **extra) -> dict:
    """Corpus document ``i`` as a JSONL record (``marker`` in its text steers the scripted LLM)."""
    return {
        "id": f"d{i}",
        "url": f"https://example.org/{i}",
        "topic": topic,
        "text": f"Recipe {i} {marker}\nHow to bake bread number {i}. " + "Lorem ipsum. " * 5,
        **extra,
    }


def write_jsonl(path, records) -> None:
    """``records`` (dicts, or lines as they are) as a JSONL file at ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines((rec if isinstance(rec, str) else json.dumps(rec)) + "\n" for rec in records)


def done_batch(status="done") -> MiningBatch:
    """A finished batch of eight kept documents: the bread paraphrase, the tire, six health
    routines (what a promotion embeds and samples)."""
    batch = MiningBatch.objects.create(
        name="b", source_format="jsonl", stages=[1, 2, 3, 4, 5, 6], status=status
    )
    rows = [("p0", "food-dining", BREAD_PARAPHRASE), ("p1", "transportation", TIRE)]
    rows += [
        (f"h{i}", "health", (f"Health routine {i}", [f"Step {j}" for j in range(5)]))
        for i in range(6)
    ]
    MiningDocument.objects.bulk_create(
        MiningDocument(
            batch=batch, position=pos, source_id=sid, topic=topic, outcome="kept", goal=g, steps=s
        )
        for pos, (sid, topic, (g, s)) in enumerate(rows, 1)
    )
    return batch
