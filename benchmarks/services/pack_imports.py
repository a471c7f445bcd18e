"""Writes: a scorer pack's own JSONL shape (:mod:`benchmarks.formats.packs`) imported as the
items of a dataset and, with a generator, that generator's outputs.

As the other imports (:mod:`benchmarks.services.imports`): the whole file is validated first
(every line by the pack itself, errors naming the line and the field), then everything is
written in one transaction; a refused file leaves the database unchanged. An item or output
already stored with other content is an error unless ``update``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from django.db import transaction

from benchmarks import formats
from benchmarks.formats.packs import PackLine, family, read_pack_lines
from benchmarks.models import Dataset, Generation, Generator, Procedure
from benchmarks.packs.registry import get_pack
from benchmarks.services.imports import (
    BATCH_SIZE,
    ImportRefused,
    ImportReport,
    check_name,
    collect_errors,
    conflict_error,
    import_limits,
    open_lines,
)
from benchmarks.tokens import count_steps_tokens

PROCEDURE_FIELDS = ["goal", "steps", "payload"]
GENERATION_FIELDS = [
    "model_completion",
    "predicted_steps",
    "token_count",
    "payload",
    "finish_reason",
    "prompt_tokens",
    "completion_tokens",
]


def _procedure_content(p: Procedure) -> tuple:
    return (p.goal, list(p.steps), dict(p.payload))


def _generation_content(g: Generation) -> tuple:
    return (
        g.model_completion,
        dict(g.payload),
        g.finish_reason,
        g.prompt_tokens,
        g.completion_tokens,
    )


def _line_generation(line: PackLine) -> dict:
    steps = line.predicted_steps
    return {
        "model_completion": line.model_completion,
        "predicted_steps": steps,
        "token_count": line.completion_tokens
        if line.completion_tokens is not None
        else count_steps_tokens(steps),
        "payload": line.output,
        "finish_reason": line.finish_reason,
        "prompt_tokens": line.prompt_tokens,
        "completion_tokens": line.completion_tokens,
    }


def pack_import(
    *,
    pack: str,
    dataset: str,
    version: str = "v1",
    generator: str | None = None,
    path: Path | str | None = None,
    lines: Iterable[bytes | str] | None = None,
    update: bool = False,
    max_errors: int = formats.DEFAULT_MAX_ERRORS,
) -> tuple[ImportReport, ImportReport | None]:
    """Import a file of ``pack``'s shape into ``dataset``@``version`` (created if absent); with
    ``generator`` (created if absent, backend "imported"), the lines' outputs become its
    generations. Returns the reports for the items and for the outputs (None without a
    generator). ``ValueError`` for an unknown pack or a bad name; :class:`ImportRefused`
    naming lines and fields for a bad file."""
    try:
        scorer = get_pack(pack)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    family(pack)  # a pack without an import shape is a ValueError
    check_name(dataset, option="--dataset", model=Dataset, field_name="name")
    check_name(version, option="--version", model=Dataset, field_name="version")
    check_name(generator, option="--generator", model=Generator, field_name="name")
    source = str(path) if path is not None else "input"
    with open_lines(path, lines) as stream:
        parsed = read_pack_lines(stream, pack=scorer, limits=import_limits(), max_errors=max_errors)
    if parsed.errors:
        raise ImportRefused(parsed.errors, source=source)
    records: list[PackLine] = parsed.records

    with transaction.atomic():
        ds = Dataset.objects.select_for_update().filter(name=dataset, version=version).first()
        if ds is None:
            ds = Dataset.objects.create(name=dataset, version=version)
        existing = {
            p.source_example_id: p
            for p in Procedure.objects.filter(
                dataset=ds, source_example_id__in=[r.source_example_id for r in records]
            )
        }
        conflicts: list[formats.RecordError] = []
        new_items: list[Procedure] = []
        changed_items: list[Procedure] = []
        unchanged = 0
        for r in records:
            current = existing.get(r.source_example_id)
            if current is None:
                current = Procedure(
                    dataset=ds,
                    source_example_id=r.source_example_id,
                    goal=r.goal,
                    steps=r.steps,
                    payload=r.gold,
                )
                new_items.append(current)
                existing[r.source_example_id] = current
            elif _procedure_content(current) == (r.goal, r.steps, r.gold):
                unchanged += 1
            elif update:
                current.goal, current.steps, current.payload = r.goal, r.steps, r.gold
                changed_items.append(current)
            else:
                conflicts.append(
                    conflict_error(
                        r.line, f"{r.source_example_id!r} is already in {ds} with other gold"
                    )
                )
        if conflicts:
            raise ImportRefused(collect_errors(conflicts, max_errors), source=source)
        Procedure.objects.bulk_create(new_items, batch_size=BATCH_SIZE)
        if changed_items:
            Procedure.objects.bulk_update(changed_items, PROCEDURE_FIELDS, batch_size=BATCH_SIZE)
        items = ImportReport(
            created=len(new_items),
            unchanged=unchanged,
            updated=len(changed_items),
            notes=tuple(parsed.notes),
        )
        if generator is None:
            return items, None
        outputs = _import_outputs(
            [r for r in records if r.has_output],
            procedures=existing,
            generator=generator,
            update=update,
            source=source,
            max_errors=max_errors,
        )
    return items, outputs


def _import_outputs(
    records: list[PackLine],
    *,
    procedures: dict[str, Procedure],
    generator: str,
    update: bool,
    source: str,
    max_errors: int,
) -> ImportReport:
    gen, _ = Generator.objects.get_or_create(
        name=generator, defaults={"backend": Generator.Backend.IMPORTED}
    )
    ids = [procedures[r.source_example_id].pk for r in records]
    existing = {
        g.procedure_id: g for g in Generation.objects.filter(generator=gen, procedure_id__in=ids)
    }
    conflicts: list[formats.RecordError] = []
    new: list[Generation] = []
    changed: list[Generation] = []
    unchanged = 0
    for r in records:
        procedure = procedures[r.source_example_id]
        values = _line_generation(r)
        current = existing.get(procedure.pk)
        if current is None:
            new.append(Generation(procedure=procedure, generator=gen, **values))
            continue
        wanted = (
            values["model_completion"],
            values["payload"],
            values["finish_reason"],
            values["prompt_tokens"],
            values["completion_tokens"],
        )
        if _generation_content(current) == wanted:
            unchanged += 1
        elif update:
            for name, value in values.items():
                setattr(current, name, value)
            changed.append(current)
        else:
            conflicts.append(
                conflict_error(
                    r.line,
                    f"generator {gen.name!r} already has a different output for "
                    f"{r.source_example_id!r}",
                )
            )
    if conflicts:
        raise ImportRefused(collect_errors(conflicts, max_errors), source=source)
    Generation.objects.bulk_create(new, batch_size=BATCH_SIZE)
    if changed:
        Generation.objects.bulk_update(changed, GENERATION_FIELDS, batch_size=BATCH_SIZE)
    return ImportReport(created=len(new), unchanged=unchanged, updated=len(changed))
