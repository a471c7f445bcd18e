"""Reads of the benchmark data: datasets, topics, procedures, generators, generations.

Keyword-only functions returning querysets or plain values. Every queryset that lists rows
brings its related rows and counts along (``select_related`` / ``prefetch_related`` /
annotations), so a page or an API list costs a fixed number of queries, whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from core.refs import DatasetRef, parse_dataset_ref

# Columns a procedure *list* never needs (the source document can be megabytes).
_PROCEDURE_LIST_DEFER = ("source_text",)


class DatasetRefError(ValueError):
    """A dataset reference that is malformed, names no dataset, or (without a version) names a
    dataset with several versions. The message says which."""


def dataset_resolve(ref: str | DatasetRef, *, default_version: str | None = None) -> Dataset:
    """The dataset ``ref`` names (``name`` or ``name@version``, see :mod:`core.refs`).

    Without a version: ``default_version`` when given, else the name's only version (a name with
    several versions is an error that lists them). Raises :class:`DatasetRefError`.
    """
    try:
        parsed = ref if isinstance(ref, DatasetRef) else parse_dataset_ref(ref)
    except ValueError as exc:
        raise DatasetRefError(str(exc)) from None
    parsed = parsed.with_default(default_version)
    qs = Dataset.objects.filter(name=parsed.name)
    if parsed.version is not None:
        found = qs.filter(version=parsed.version).first()
        if found is None:
            raise DatasetRefError(f"no dataset {parsed}")
        return found
    found = list(qs.order_by("version"))
    if not found:
        raise DatasetRefError(f"no dataset named {parsed.name!r}")
    if len(found) > 1:
        versions = ", ".join(d.version for d in found)
        raise DatasetRefError(
            f"dataset {parsed.name!r} has several versions ({versions}); "
            f"choose one as {parsed.name}@VERSION"
        )
    return found[0]


def dataset_q(value: str | int, *, prefix: str = "") -> Q:
    """A filter matching a dataset given by id, by name (every version), or by
    ``name@version``. A malformed reference is a ``ValueError`` (:mod:`core.refs`)."""
    text = str(value).strip()
    if text.isdigit():
        return Q(**{f"{prefix}pk": int(text)})
    ref = parse_dataset_ref(text)
    q = Q(**{f"{prefix}name": ref.name})
    if ref.version is not None:
        q &= Q(**{f"{prefix}version": ref.version})
    return q


def generator_q(value: str | int, *, prefix: str = "") -> Q:
    """A filter matching a generator given by id or by name."""
    text = str(value).strip()
    q = Q(**{f"{prefix}name": text})
    if text.isdigit():
        q |= Q(**{f"{prefix}pk": int(text)})
    return q


# --- datasets ---------------------------------------------------------------------------------


def dataset_list() -> QuerySet[Dataset]:
    """Datasets with ``n_procedures``, ``n_generations``, ``n_generators`` and ``n_topics``."""
    return Dataset.objects.annotate(
        n_procedures=Count("procedures", distinct=True),
        n_generations=Count("procedures__generations", distinct=True),
        n_generators=Count("procedures__generations__generator", distinct=True),
        n_topics=Count("procedures__topic", distinct=True),
    ).order_by("name", "version")


def dataset_get(*, pk: int) -> Dataset:
    """One dataset with its counts, or 404."""
    return get_object_or_404(dataset_list(), pk=pk)


@dataclass(frozen=True)
class TopicCount:
    slug: str | None
    name: str
    count: int


def dataset_topic_counts(*, dataset: Dataset) -> list[TopicCount]:
    """Procedures per topic in a dataset, in topic order; procedures without a topic last."""
    rows = (
        Procedure.objects.filter(dataset=dataset)
        .values("topic__slug", "topic__name", "topic__position")
        .annotate(count=Count("id"))
        .order_by("topic__position", "topic__name")
    )
    counts = [
        TopicCount(slug=r["topic__slug"], name=r["topic__name"] or "No topic", count=r["count"])
        for r in rows
    ]
    return sorted(counts, key=lambda c: c.slug is None)


# --- topics -----------------------------------------------------------------------------------


def topic_list(*, dataset: Dataset | None = None) -> QuerySet[Topic]:
    """Topics with ``n_procedures`` (within ``dataset`` when given)."""
    condition = Q(procedures__dataset=dataset) if dataset is not None else None
    return Topic.objects.annotate(n_procedures=Count("procedures", filter=condition)).order_by(
        "position", "name"
    )


# --- procedures -------------------------------------------------------------------------------


def procedure_list(
    *,
    dataset: Dataset | str | int | None = None,
    topic: str | None = None,
    search: str | None = None,
    source_example_id: str | None = None,
) -> QuerySet[Procedure]:
    """Procedures with dataset and topic joined and ``n_generations`` counted.

    ``dataset`` is a Dataset, an id, a name or ``name@version``; ``topic`` a slug (``"none"``
    for procedures without a topic); ``search`` matches words of the goal or the source id.
    """
    qs = (
        Procedure.objects.select_related("dataset", "topic")
        .defer(*_PROCEDURE_LIST_DEFER)
        .annotate(n_generations=Count("generations"))
        .order_by("dataset_id", "id")
    )
    if isinstance(dataset, Dataset):
        qs = qs.filter(dataset=dataset)
    elif dataset not in (None, ""):
        qs = qs.filter(dataset_q(dataset, prefix="dataset__"))
    if topic:
        qs = qs.filter(topic__isnull=True) if topic == "none" else qs.filter(topic__slug=topic)
    if source_example_id:
        qs = qs.filter(source_example_id=source_example_id)
    if search:
        for word in search.split()[:10]:
            qs = qs.filter(Q(goal__icontains=word) | Q(source_example_id__icontains=word))
    return qs


def _generations_for_display() -> QuerySet[Generation]:
    return Generation.objects.select_related("generator").order_by("generator__name", "id")


def procedure_get(*, pk: int, with_generations: bool = True) -> Procedure:
    """One procedure with dataset, topic and (by default) every generation with its generator."""
    qs = Procedure.objects.select_related("dataset", "topic")
    if with_generations:
        qs = qs.prefetch_related(Prefetch("generations", queryset=_generations_for_display()))
    return get_object_or_404(qs, pk=pk)


def procedure_detail_list() -> QuerySet[Procedure]:
    """Procedures with everything a detail view shows (API detail: source text, generations)."""
    return (
        Procedure.objects.select_related("dataset", "topic")
        .annotate(n_generations=Count("generations"))
        .prefetch_related(Prefetch("generations", queryset=_generations_for_display()))
        .order_by("dataset_id", "id")
    )


def procedure_neighbours(*, procedure: Procedure) -> tuple[int | None, int | None]:
    """Ids of the previous and next procedure in the same dataset (by id), for paging."""
    siblings = Procedure.objects.filter(dataset_id=procedure.dataset_id)
    prev_id = (
        siblings.filter(pk__lt=procedure.pk).order_by("-pk").values_list("pk", flat=True).first()
    )
    next_id = (
        siblings.filter(pk__gt=procedure.pk).order_by("pk").values_list("pk", flat=True).first()
    )
    return prev_id, next_id


# --- generators and generations ------------------------------------------------------------------


def generator_list() -> QuerySet[Generator]:
    """Generators with ``n_generations``."""
    return Generator.objects.annotate(n_generations=Count("generations")).order_by("name")


def generation_list(
    *,
    generator: str | int | None = None,
    dataset: str | int | None = None,
    topic: str | None = None,
    procedure: int | None = None,
    source_example_id: str | None = None,
) -> QuerySet[Generation]:
    """Generations with procedure, dataset, topic and generator joined (procedure text deferred)."""
    qs = (
        Generation.objects.select_related("procedure__dataset", "procedure__topic", "generator")
        .defer("procedure__source_text", "procedure__steps", "procedure__resources")
        .order_by("procedure_id", "generator_id")
    )
    if generator not in (None, ""):
        qs = qs.filter(generator_q(generator, prefix="generator__"))
    if dataset not in (None, ""):
        qs = qs.filter(dataset_q(dataset, prefix="procedure__dataset__"))
    if topic:
        qs = qs.filter(procedure__topic__slug=topic)
    if procedure is not None:
        qs = qs.filter(procedure_id=procedure)
    if source_example_id:
        qs = qs.filter(procedure__source_example_id=source_example_id)
    return qs
