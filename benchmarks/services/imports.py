"""Writes for the benchmarks app: JSONL imports of procedures and generations.

Each import validates the whole file first (benchmarks.formats), then writes everything in one
transaction with ``bulk_create``/``bulk_update``. A refused file leaves the database unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from benchmarks import formats
from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from benchmarks.selectors.catalog import dataset_resolve
from benchmarks.tokens import count_steps_tokens

BATCH_SIZE = 1000
LOOKUP_CHUNK = 5000


class ImportRefused(Exception):
    """The file was refused as a whole; ``errors`` lists (capped) problems with line and field."""

    def __init__(self, errors: formats.ErrorCollector, *, source: str = "") -> None:
        self.collector = errors
        self.errors = list(errors.errors)
        self.total = errors.total
        self.source = source
        head = f"{source}: " if source else ""
        super().__init__(
            f"{head}refused, nothing imported ({self.total} error(s)):\n"
            + "\n".join(errors.lines())
        )


@dataclass(frozen=True)
class ImportReport:
    created: int = 0
    unchanged: int = 0
    updated: int = 0
    notes: tuple[str, ...] = ()  # lines cleaned of control characters (core.text), named

    def __str__(self) -> str:
        text = f"created {self.created}, unchanged {self.unchanged}, updated {self.updated}"
        return "\n".join([text, *self.notes])


def collect_errors(errors: Iterable[formats.RecordError], cap: int) -> formats.ErrorCollector:
    collector = formats.ErrorCollector(cap=cap)
    collector.extend(errors)
    return collector


def import_limits() -> formats.Limits:
    return formats.Limits.from_mapping(getattr(settings, "IMPORT_LIMITS", None))


@contextmanager
def open_lines(
    path: Path | str | None, lines: Iterable[bytes | str] | None
) -> Iterator[Iterable[bytes | str]]:
    if (path is None) == (lines is None):
        raise ValueError("give exactly one of path= or lines=")
    if lines is not None:
        yield lines
        return
    with open(path, "rb") as handle:  # binary: invalid UTF-8 is reported with its line number
        yield handle


def check_name(value: str | None, *, option: str, model, field_name: str) -> None:
    limit = model._meta.get_field(field_name).max_length
    if value is not None and (not value.strip() or len(value) > limit):
        raise ValueError(f"{option} must be 1 to {limit} characters, got {len(value)}")


def conflict_error(line: int, what: str) -> formats.RecordError:
    """A record whose ``source_example_id`` is stored with other content (refused unless
    ``update``)."""
    return formats.RecordError(line, "source_example_id", f"{what} (use --update to replace it)")


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- procedures -----------------------------------------------------------------------------------


def _procedure_content(p: Procedure, topic_slugs: dict[int, str]) -> tuple:
    return (
        topic_slugs.get(p.topic_id) if p.topic_id else None,
        p.goal,
        list(p.resources),
        list(p.steps),
        p.url,
        p.source_text,
    )


def procedures_import(
    *,
    dataset: str,
    version: str = "v1",
    path: Path | str | None = None,
    lines: Iterable[bytes | str] | None = None,
    update: bool = False,
    max_errors: int = formats.DEFAULT_MAX_ERRORS,
) -> ImportReport:
    """Import example records into dataset ``dataset``@``version`` (created if absent).

    Records whose ``source_example_id`` is already in the dataset with the same content are left
    alone; with different content they are an error unless ``update`` is true.
    """
    check_name(dataset, option="--dataset", model=Dataset, field_name="name")
    check_name(version, option="--version", model=Dataset, field_name="version")
    source = str(path) if path is not None else "input"
    with open_lines(path, lines) as stream:
        parsed = formats.read_examples(stream, limits=import_limits(), max_errors=max_errors)
    if parsed.errors:
        raise ImportRefused(parsed.errors, source=source)
    records: list[formats.ExampleRecord] = parsed.records

    topics = dict(Topic.objects.values_list("slug", "id"))
    topic_slugs = {pk: slug for slug, pk in topics.items()}
    missing = {r.topic_slug for r in records if r.topic_slug and r.topic_slug not in topics}
    if missing:
        raise ImportRefused(
            collect_errors(
                (
                    formats.RecordError(
                        r.line,
                        "topic",
                        f"topic {r.topic_slug!r} is not in the database (run migrate)",
                    )
                    for r in records
                    if r.topic_slug in missing
                ),
                max_errors,
            ),
            source=source,
        )

    with transaction.atomic():
        ds = Dataset.objects.filter(name=dataset, version=version).select_for_update().first()
        existing: dict[str, Procedure] = {}
        if ds is None:
            ds = Dataset.objects.create(name=dataset, version=version)
        else:
            ids = [r.source_example_id for r in records]
            for chunk in _chunks(ids, LOOKUP_CHUNK):
                for p in Procedure.objects.filter(dataset=ds, source_example_id__in=chunk):
                    existing[p.source_example_id] = p

        to_create: list[Procedure] = []
        to_update: list[Procedure] = []
        conflicts: list[formats.RecordError] = []
        unchanged = 0
        for r in records:
            current = existing.get(r.source_example_id)
            if current is None:
                to_create.append(
                    Procedure(
                        dataset=ds,
                        source_example_id=r.source_example_id,
                        topic_id=topics[r.topic_slug] if r.topic_slug else None,
                        goal=r.goal,
                        resources=r.resources,
                        steps=r.steps,
                        url=r.url,
                        source_text=r.source_text,
                    )
                )
            elif _procedure_content(current, topic_slugs) == r.content():
                unchanged += 1
            elif update:
                current.topic_id = topics[r.topic_slug] if r.topic_slug else None
                current.goal, current.resources, current.steps = r.goal, r.resources, r.steps
                current.url, current.source_text = r.url, r.source_text
                to_update.append(current)
            else:
                conflicts.append(
                    conflict_error(
                        r.line, f"{r.source_example_id!r} is already in {ds} with different content"
                    )
                )
        if conflicts:
            raise ImportRefused(collect_errors(conflicts, max_errors), source=source)

        Procedure.objects.bulk_create(to_create, batch_size=BATCH_SIZE)
        if to_update:
            Procedure.objects.bulk_update(
                to_update,
                ["topic", "goal", "resources", "steps", "url", "source_text"],
                batch_size=BATCH_SIZE,
            )
    return ImportReport(
        created=len(to_create),
        unchanged=unchanged,
        updated=len(to_update),
        notes=tuple(parsed.notes),
    )


# --- generations ----------------------------------------------------------------------------------


def _generation_content(g: Generation) -> tuple:
    return (
        g.model_completion,
        list(g.predicted_steps),
        g.token_count,
        g.finish_reason,
        g.prompt_tokens,
        g.completion_tokens,
    )


USAGE_FIELDS = ("finish_reason", "prompt_tokens", "completion_tokens")


def _usage(r: formats.GenerationRecord, current: Generation | None) -> dict:
    """finish_reason and token counts from the record; where it gives none, what is stored (a
    file without them neither clears them nor differs because of them)."""
    out = {}
    for name in USAGE_FIELDS:
        value = getattr(r, name)
        missing = value is None or value == ""
        out[name] = (getattr(current, name) if current is not None else value) if missing else value
    out["finish_reason"] = out["finish_reason"] or ""
    return out


def _procedure_index(ids: list[str], dataset: Dataset | None) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    base = Procedure.objects.all() if dataset is None else Procedure.objects.filter(dataset=dataset)
    for chunk in _chunks(sorted(set(ids)), LOOKUP_CHUNK):
        for sid, pk in base.filter(source_example_id__in=chunk).values_list(
            "source_example_id", "id"
        ):
            index.setdefault(sid, []).append(pk)
    return index


def generations_import(
    *,
    generator: str,
    dataset: str | None = None,
    path: Path | str | None = None,
    lines: Iterable[bytes | str] | None = None,
    update: bool = False,
    max_errors: int = formats.DEFAULT_MAX_ERRORS,
) -> ImportReport:
    """Import generation records of generator ``generator`` (created if absent).

    Each record is matched to a procedure by ``source_example_id``: in the dataset ``dataset``
    names (``name@version``, or a name with a single version; see
    :func:`~benchmarks.selectors.catalog.dataset_resolve`) when given, else across all datasets,
    where an id found in several datasets is an error. ``token_count`` is counted over the predicted steps (o200k)
    when a record has none.
    """
    check_name(generator, option="--generator", model=Generator, field_name="name")
    source = str(path) if path is not None else "input"
    ds = dataset_resolve(dataset) if dataset else None
    with open_lines(path, lines) as stream:
        parsed = formats.read_generations(stream, limits=import_limits(), max_errors=max_errors)
    if parsed.errors:
        raise ImportRefused(parsed.errors, source=source)
    records: list[formats.GenerationRecord] = parsed.records

    index = _procedure_index([r.source_example_id for r in records], ds)
    where = f"dataset {ds}" if ds else "any dataset"
    matched, errors = formats.match_generations(records, index, where=where)
    if errors:
        raise ImportRefused(collect_errors(errors, max_errors), source=source)

    # Token counting (pure CPU) runs one chunk ahead in a helper thread, overlapping the database
    # round trips of the previous chunk; the transaction stays on this thread.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="token-count")
    counted = [
        pool.submit(formats.fill_token_counts, chunk, count_steps_tokens)
        for chunk in _chunks(records, BATCH_SIZE)
    ]
    try:
        with transaction.atomic():
            gen = Generator.objects.select_for_update().filter(name=generator).first()
            existing: dict[int, Generation] = {}
            if gen is None:
                model = next((r.generator_model for r in records if r.generator_model), "")
                gen = Generator.objects.create(
                    name=generator, model=model, backend=Generator.Backend.IMPORTED
                )
            else:
                for chunk in _chunks(list(matched.values()), LOOKUP_CHUNK):
                    for g in Generation.objects.filter(generator=gen, procedure_id__in=chunk):
                        existing[g.procedure_id] = g

            created = unchanged = 0
            to_update: list[Generation] = []
            conflicts: list[formats.RecordError] = []
            for future in counted:
                to_create: list[Generation] = []
                for r in future.result():
                    procedure_id = matched[r.line]
                    current = existing.get(procedure_id)
                    if current is None:
                        to_create.append(
                            Generation(
                                procedure_id=procedure_id,
                                generator=gen,
                                model_completion=r.model_completion,
                                predicted_steps=r.predicted_steps,
                                token_count=r.token_count,
                                **_usage(r, None),
                            )
                        )
                        continue
                    usage = _usage(r, current)
                    if _generation_content(current) == (
                        r.model_completion,
                        r.predicted_steps,
                        r.token_count,
                        *(usage[name] for name in USAGE_FIELDS),
                    ):
                        unchanged += 1
                    elif update:
                        current.model_completion = r.model_completion
                        current.predicted_steps = r.predicted_steps
                        current.token_count = r.token_count
                        for name, value in usage.items():
                            setattr(current, name, value)
                        to_update.append(current)
                    else:
                        conflicts.append(
                            conflict_error(
                                r.line,
                                f"generator {gen.name!r} already has a different generation for "
                                f"{r.source_example_id!r}",
                            )
                        )
                if (
                    not conflicts
                ):  # once refused, only keep collecting errors; the rollback undoes writes
                    Generation.objects.bulk_create(to_create, batch_size=BATCH_SIZE)
                    created += len(to_create)
            if conflicts:
                raise ImportRefused(collect_errors(conflicts, max_errors), source=source)
            if to_update:
                Generation.objects.bulk_update(
                    to_update,
                    ["model_completion", "predicted_steps", "token_count", *USAGE_FIELDS],
                    batch_size=BATCH_SIZE,
                )
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # a refusal stops the counting still queued
    return ImportReport(
        created=created, unchanged=unchanged, updated=len(to_update), notes=tuple(parsed.notes)
    )
