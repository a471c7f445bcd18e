"""Reads for creating a study (:mod:`annotation.services.study`): which generations become its
regular items and which its known-answer items."""

from __future__ import annotations

from collections.abc import Iterable

from annotation.known_items import ANSWER_KEYS, KnownItemsError, parse_known_items
from benchmarks.models import Dataset, Generation, Generator


def _generations(dataset: Dataset, generator: Generator):
    return Generation.objects.filter(procedure__dataset=dataset, generator=generator)


def known_items_read(
    *, dataset: Dataset, generator: Generator, lines: Iterable[str], source: str
) -> list[dict]:
    """A known-items JSONL file (``create_study --known-items``, the study form's upload) as
    ``study_create`` takes it; ``KnownItemsError`` names the file line and the field."""
    parsed = parse_known_items(lines, source=source)
    return known_items_resolved(dataset=dataset, generator=generator, parsed=parsed, source=source)


def known_items_resolved(
    *, dataset: Dataset, generator: Generator, parsed: Iterable[dict], source: str
) -> list[dict]:
    """Parsed known items (:func:`annotation.known_items.parse_known_items`) as
    ``study_create`` takes them: each with its ``generation_id``, given or looked up by
    ``source_example_id`` among the generator's generations on the dataset.
    ``KnownItemsError`` naming the line of an item that has none."""
    by_source = dict(
        _generations(dataset, generator).values_list("procedure__source_example_id", "pk")
    )
    known = []
    for item in parsed:
        gid = item.get("generation_id") or by_source.get(item.get("source_example_id"))
        if gid is None:
            raise KnownItemsError(
                f"{source} line {item['line']}: source_example_id "
                f"{item['source_example_id']!r} has no generation by {generator.name} on {dataset}"
            )
        keys = ("kind", "explanation", "attempt", *ANSWER_KEYS)
        known.append({"generation_id": gid, **{k: item[k] for k in keys if k in item}})
    return known


def regular_generation_ids(
    *, dataset: Dataset, generator: Generator, exclude: Iterable[int], limit: int
) -> list[int]:
    """The first ``limit`` of the generator's generations on the dataset (in procedure order),
    leaving out ``exclude`` (the known items)."""
    excluded = set(exclude)
    ids = _generations(dataset, generator).order_by("procedure_id").values_list("pk", flat=True)
    return [g for g in ids if g not in excluded][:limit]


def generation_pairs(
    *, dataset: Dataset, generator: Generator, generator_b: Generator, limit: int
) -> list[list[int]]:
    """A pairwise study's items from two generators: per procedure of the dataset that both
    generated, ``[first generator's generation, second's]`` (the earliest of each when a
    generator has several), in procedure order, at most ``limit``."""

    def first_by_procedure(gen: Generator) -> dict[int, int]:
        out: dict[int, int] = {}
        rows = _generations(dataset, gen).order_by("procedure_id", "pk")
        for procedure_id, pk in rows.values_list("procedure_id", "pk"):
            out.setdefault(procedure_id, pk)
        return out

    a, b = first_by_procedure(generator), first_by_procedure(generator_b)
    return [[a[p], b[p]] for p in sorted(set(a) & set(b))][:limit]
