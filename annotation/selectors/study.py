"""Reads for creating a study (:mod:`annotation.services.study`): which generations become its
regular items and which its known-answer items."""

from __future__ import annotations

from collections.abc import Iterable

from annotation.known_items import KnownItemsError
from benchmarks.models import Dataset, Generation, Generator


def _generations(dataset: Dataset, generator: Generator):
    return Generation.objects.filter(procedure__dataset=dataset, generator=generator)


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
        known.append(
            {
                "generation_id": gid,
                "kind": item["kind"],
                "expected_has_failure": item["expected_has_failure"],
                "explanation": item["explanation"],
            }
        )
    return known


def regular_generation_ids(
    *, dataset: Dataset, generator: Generator, exclude: Iterable[int], limit: int
) -> list[int]:
    """The first ``limit`` of the generator's generations on the dataset (in procedure order),
    leaving out ``exclude`` (the known items)."""
    excluded = set(exclude)
    ids = _generations(dataset, generator).order_by("procedure_id").values_list("pk", flat=True)
    return [g for g in ids if g not in excluded][:limit]
