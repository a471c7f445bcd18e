"""Promote a batch's kept procedures into a Dataset: de-duplicate against another dataset by
embedding cosine similarity (§E.1), then sample per topic with a fixed seed (§3.2).

Embedding every candidate takes seconds to minutes, so the console and the API only ask for a
promotion (:func:`batch_promote_request`: checked, stored in ``batch.options["promotion"]``) and
a Celery task (``mining.promote``) does it (:func:`batch_promote_work`); the batch page polls
the promotion's state. :func:`batch_promote` is the work itself (commands, tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from benchmarks.models import Dataset, Procedure, Topic
from core.errors import validation_text
from mining import dedup
from mining.models import MiningBatch, MiningDocument
from mining.sampling import stratified_sample

PENDING = ("queued", "running")


def _check(*, dataset_name: str, version: str, per_topic: int, threshold: float) -> None:
    if not dataset_name.strip():
        raise ValidationError({"dataset_name": "a dataset name is required"})
    if per_topic < 1:
        raise ValidationError({"per_topic": f"per_topic must be >= 1, got {per_topic}"})
    if not 0.0 < threshold <= 1.0:
        raise ValidationError({"threshold": f"threshold must be in (0, 1], got {threshold}"})
    if Dataset.objects.filter(name=dataset_name, version=version).exists():
        raise ValidationError({"dataset_name": f"dataset {dataset_name}@{version} already exists"})


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
    _check(dataset_name=dataset_name, version=version, per_topic=per_topic, threshold=threshold)

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


# --- in the background ------------------------------------------------------------------------


def _state(batch: MiningBatch) -> dict[str, Any] | None:
    return (batch.options or {}).get("promotion")


def promotion_state(batch: MiningBatch) -> dict[str, Any] | None:
    """The batch's last promotion asked in the console or the API: ``status`` (queued,
    running, done, failed), ``pending`` (queued or running), ``dataset`` (name@version), then
    ``dataset_id``, ``promoted``, ``duplicates``, ``candidates`` or ``error``."""
    state = _state(batch)
    return None if state is None else {**state, "pending": state.get("status") in PENDING}


def _set_state(batch_id: int, state: dict[str, Any]) -> None:
    with transaction.atomic():
        locked = MiningBatch.objects.select_for_update().get(pk=batch_id)
        MiningBatch.objects.filter(pk=batch_id).update(
            options={**(locked.options or {}), "promotion": state}
        )


def enqueue_promotion(batch_id: int) -> None:
    from mining.tasks import promote

    promote.delay(batch_id)


def batch_promote_request(
    *,
    batch: MiningBatch,
    dataset_name: str,
    version: str = "v1",
    description: str = "",
    per_topic: int = 500,
    seed: int = 0,
    dedup_against: Dataset | None = None,
    threshold: float = dedup.DEFAULT_THRESHOLD,
) -> dict[str, Any]:
    """Check a promotion (errors name the field) and hand it to a worker: the task is sent when
    the transaction commits. One promotion at a time per batch."""
    _check(dataset_name=dataset_name, version=version, per_topic=per_topic, threshold=threshold)
    if batch.is_active:
        raise ValidationError(f"batch {batch.pk} is {batch.status}: promote it once it has ended")
    with transaction.atomic():
        locked = MiningBatch.objects.select_for_update().get(pk=batch.pk)
        current = _state(locked)
        if current and current.get("status") in PENDING:
            raise ValidationError(
                f"batch {batch.pk} is already being promoted into {current.get('dataset')}"
            )
        state = {
            "status": "queued",
            "dataset": f"{dataset_name}@{version}",
            "asked_at": timezone.now().isoformat(),
            "params": {
                "dataset_name": dataset_name,
                "version": version,
                "description": description,
                "per_topic": per_topic,
                "seed": seed,
                "dedup_against": dedup_against.pk if dedup_against else None,
                "threshold": threshold,
            },
        }
        MiningBatch.objects.filter(pk=batch.pk).update(
            options={**(locked.options or {}), "promotion": state}
        )
        transaction.on_commit(lambda: enqueue_promotion(batch.pk))
    return state


def batch_promote_work(*, batch_id: int) -> dict[str, Any] | None:
    """The task's body: promote as asked and store the outcome (or the error) on the batch. A
    promotion that is no longer pending (done, failed) is left as it is."""
    batch = MiningBatch.objects.filter(pk=batch_id).first()
    state = _state(batch) if batch else None
    if not state or state.get("status") not in PENDING:
        return state
    _set_state(batch_id, {**state, "status": "running"})
    params = dict(state["params"])
    ref_id = params.pop("dedup_against", None)
    try:
        ref = Dataset.objects.get(pk=ref_id) if ref_id else None
        report = batch_promote(batch=batch, dedup_against=ref, **params)
    except Dataset.DoesNotExist:
        outcome = {"status": "failed", "error": f"dataset {ref_id} to de-duplicate against is gone"}
    except ValidationError as exc:
        outcome = {"status": "failed", "error": validation_text(exc)}
    except Exception as exc:  # noqa: BLE001 - stored and shown on the batch page
        outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"[:2000]}
    else:
        outcome = {
            "status": "done",
            "dataset_id": report.dataset.pk,
            "promoted": report.promoted,
            "candidates": report.candidates,
            "duplicates": len(report.duplicates),
            "per_topic": report.per_topic,
        }
    final = {**state, **outcome, "finished_at": timezone.now().isoformat()}
    _set_state(batch_id, final)
    return final
