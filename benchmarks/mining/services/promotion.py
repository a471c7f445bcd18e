"""Promote a batch's kept procedures into a Dataset: de-duplicate against another dataset by
embedding cosine similarity (§E.1), then sample per topic with a fixed seed (§3.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from benchmarks.mining import dedup
from benchmarks.mining.models import MiningBatch, MiningDocument
from benchmarks.mining.sampling import stratified_sample
from benchmarks.models import Dataset, Procedure, Topic


@dataclass
class PromotionReport:
    dataset: Dataset
    candidates: int
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    per_topic: dict[str, int] = field(default_factory=dict)

    @property
    def promoted(self) -> int:
        return sum(self.per_topic.values())


def batch_promote(
    *,
    batch: MiningBatch,
    dataset_name: str,
    version: str = "v1",
    description: str = "",
    per_topic: int = 500,
    seed: int = 0,
    dedup_against: Dataset | None = None,
    threshold: float = dedup.DEFAULT_THRESHOLD,
) -> PromotionReport:
    if not dataset_name.strip():
        raise ValidationError({"dataset_name": "a dataset name is required"})
    if per_topic < 1:
        raise ValidationError({"per_topic": f"per_topic must be >= 1, got {per_topic}"})
    if not 0.0 < threshold <= 1.0:
        raise ValidationError({"threshold": f"threshold must be in (0, 1], got {threshold}"})
    if Dataset.objects.filter(name=dataset_name, version=version).exists():
        raise ValidationError({"dataset_name": f"dataset {dataset_name}@{version} already exists"})

    docs = list(
        MiningDocument.objects.filter(batch=batch, outcome=MiningDocument.Outcome.KEPT)
        .exclude(topic="")
        .order_by("position")
        .only("pk", "source_id", "topic", "url", "text", "goal", "steps", "resources")
    )
    duplicates: list[dict[str, Any]] = []
    if dedup_against is not None and docs:
        refs = list(
            Procedure.objects.filter(dataset=dedup_against).only(
                "source_example_id", "goal", "steps"
            )
        )
        hits = dedup.near_duplicates(
            [dedup.procedure_text(d.goal, d.steps) for d in docs],
            [dedup.procedure_text(p.goal, p.steps) for p in refs],
            threshold=threshold,
        )
        dup_idx = {h.index for h in hits}
        duplicates = [
            {
                "source_id": docs[h.index].source_id,
                "nearest": refs[h.ref_index].source_example_id,
                "similarity": round(h.similarity, 4),
            }
            for h in hits
        ]
        docs = [d for i, d in enumerate(docs) if i not in dup_idx]

    by_pk = {d.pk: d for d in docs}
    chosen = stratified_sample(((d.pk, d.topic) for d in docs), per_topic=per_topic, seed=seed)
    topics = {t.slug: t for t in Topic.objects.all()}
    seen_ids: set[str] = set()
    rows: list[Procedure] = []
    try:
        with transaction.atomic():
            dataset = Dataset.objects.create(
                name=dataset_name,
                version=version,
                description=description
                or f"Promoted from mining batch {batch.pk} ({batch.name}); "
                f"{per_topic} per topic, seed {seed}"
                + (
                    f", de-duplicated against {dedup_against} at cosine > {threshold}"
                    if dedup_against
                    else ""
                ),
            )
            for topic in sorted(chosen):
                for pk in chosen[topic]:
                    d = by_pk[pk]
                    sid = d.source_id if d.source_id not in seen_ids else f"{d.source_id}#{pk}"
                    seen_ids.add(sid)
                    rows.append(
                        Procedure(
                            dataset=dataset,
                            source_example_id=sid,
                            topic=topics.get(topic),
                            goal=d.goal,
                            resources=d.resources,
                            steps=d.steps,
                            url=d.url if d.url.startswith(("http://", "https://")) else "",
                            source_text=d.text,
                        )
                    )
            Procedure.objects.bulk_create(rows, batch_size=1000)
    except IntegrityError as exc:
        raise ValidationError(f"could not create dataset {dataset_name}@{version}: {exc}") from None
    return PromotionReport(
        dataset=dataset,
        candidates=len(by_pk) + len(duplicates),
        duplicates=duplicates,
        per_topic={t: len(v) for t, v in chosen.items()},
    )
