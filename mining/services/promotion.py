"""Promote a batch's kept procedures into a Dataset: de-duplicate against another dataset by
embedding cosine similarity (§E.1), then sample per topic with a fixed seed (§3.2).

Embedding every candidate takes seconds to minutes, so the console and the API only ask for a
promotion (:func:`batch_promote_request`: checked, stored as a :class:`MiningPromotion` run)
and the run engine works it (:class:`MiningPromotionExecutor`, on the engine's one chunk task);
the batch page polls the promotion's state. :func:`batch_promote` is the work itself
(commands, tests)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from benchmarks.models import Dataset, Procedure, Topic
from core.errors import validation_text
from core.runs import dispatch, engine
from core.runs.engine import KEEP_WORKING, Lease, RunExecutor
from core.runs.models import RunStatus
from mining import dedup
from mining.models import MiningBatch, MiningDocument, MiningPromotion
from mining.sampling import stratified_sample

Outcome = MiningDocument.Outcome


def _check(*, dataset_name: str, version: str, per_topic: int, threshold: float) -> None:
    if not dataset_name.strip():
        raise ValidationError({"dataset_name": "a dataset name is required"})
    if per_topic < 1:
        raise ValidationError({"per_topic": f"per_topic must be >= 1, got {per_topic}"})
    if not 0.0 < threshold <= 1.0:
        raise ValidationError({"threshold": f"threshold must be in (0, 1], got {threshold}"})
    if Dataset.objects.filter(name=dataset_name, version=version).exists():
        raise ValidationError({"dataset_name": f"dataset {dataset_name}@{version} already exists"})


class NotKept(Exception):
    """The promotion was stopped before its dataset committed (nothing kept)."""


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
    commit_if: Callable[[PromotionReport], bool] | None = None,
) -> PromotionReport:
    """Make the dataset. ``commit_if(report)``, called before the dataset's transaction
    commits, may refuse it (a promotion run cancelled or no longer held): nothing is kept and
    :class:`NotKept` is raised."""
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
            report = PromotionReport(
                dataset=dataset,
                candidates=len(by_pk) + len(duplicates),
                duplicates=duplicates,
                per_topic={t: len(v) for t, v in chosen.items()},
            )
            if commit_if is not None and not commit_if(report):
                raise NotKept(f"promotion into {dataset_name}@{version} stopped")
    except IntegrityError as exc:
        raise ValidationError(f"could not create dataset {dataset_name}@{version}: {exc}") from None
    return report


# --- in the background: a run of the engine ----------------------------------------------------


def _latest(batch_id: int) -> MiningPromotion | None:
    return MiningPromotion.objects.filter(batch_id=batch_id).order_by("-created_at", "-id").first()


def promotion_state(batch: MiningBatch) -> dict[str, Any] | None:
    """The batch's last promotion asked in the console or the API (:class:`MiningPromotion`),
    as the pages and the API show it: ``status`` (the engine's words), ``pending`` (queued,
    running or cancelling), ``dataset`` (name@version), ``asked_at``, ``params``, then
    ``dataset_id``, ``promoted``, ``duplicates``, ``candidates``, ``per_topic`` (done) or
    ``error``; ``id``, ``n_total``, ``n_done`` of the run."""
    run = _latest(batch.pk)
    return None if run is None else promotion_as_dict(run)


def promotion_as_dict(run: MiningPromotion) -> dict[str, Any]:
    state: dict[str, Any] = {
        "id": run.pk,
        "status": run.status,
        "pending": run.is_active,
        "dataset": run.target,
        "asked_at": run.created_at.isoformat() if run.created_at else None,
        "params": run.params,
        "n_total": run.n_total,
        "n_done": run.n_done,
    }
    if run.status == RunStatus.DONE:
        state.update(dataset_id=run.dataset_id, **(run.result or {}))
    if run.error:
        state["error"] = run.error
    if run.finished_at:
        state["finished_at"] = run.finished_at.isoformat()
    return state


def enqueue_promotion(batch_id: int) -> None:
    """Send the first chunk of the batch's pending promotion (after commit)."""
    run = _latest(batch_id)
    if run is not None and run.is_active:
        engine.enqueue(run)


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
    user=None,
) -> dict[str, Any]:
    """Check a promotion (errors name the field) and store it as a run (its chunk is sent when
    the transaction commits). One promotion at a time per batch."""
    _check(dataset_name=dataset_name, version=version, per_topic=per_topic, threshold=threshold)
    if batch.is_active:
        raise ValidationError(f"batch {batch.pk} is {batch.status}: promote it once it has ended")
    with transaction.atomic():
        MiningBatch.objects.select_for_update().filter(pk=batch.pk).first()
        current = _latest(batch.pk)
        if current is not None and current.is_active:
            raise ValidationError(
                f"batch {batch.pk} is already being promoted into {current.target}"
            )
        run = MiningPromotion.objects.create(
            batch=batch,
            created_by=user,
            params={
                "dataset_name": dataset_name,
                "version": version,
                "description": description,
                "per_topic": per_topic,
                "seed": seed,
                "dedup_against": dedup_against.pk if dedup_against else None,
                "threshold": threshold,
            },
        )
        dispatch.require_broker()  # a broker that cannot be reached: 503, nothing stored
        dispatch.send_after_commit(lambda: enqueue_promotion(batch.pk), f"promotion {run.pk}")
    return promotion_as_dict(run)


def batch_promote_work(*, batch_id: int) -> dict[str, Any] | None:
    """Work the batch's pending promotion in this process, as the engine's chunk task would
    (commands, tests); returns its state. One no longer pending is left as it is."""
    run = _latest(batch_id)
    if run is None:
        return None
    if run.is_active:
        run = engine.execute_inline(run)
    return promotion_as_dict(run)


def promotion_cancel(*, promotion: MiningPromotion) -> MiningPromotion:
    try:
        return engine.cancel(promotion)
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from None


def promotion_resume(*, promotion: MiningPromotion) -> MiningPromotion:
    try:
        return engine.resume(promotion)
    except engine.RunStateError as exc:
        raise ValidationError(str(exc)) from None


class MiningPromotionExecutor(RunExecutor):
    """One chunk promotes (de-duplicates, samples, makes the dataset in one transaction that
    commits only while the lease is held and the run not cancelled). A refusal (the dataset
    name taken meanwhile, the reference dataset gone) fails the run with its reason."""

    def work_chunk(self, run: MiningPromotion, lease: Lease) -> bool:
        run.error = ""
        params = dict(run.params)
        ref_id = params.pop("dedup_against", None)

        def keep(report: PromotionReport) -> bool:
            if lease.beat() not in KEEP_WORKING:
                return False
            result = {
                "promoted": report.promoted,
                "candidates": report.candidates,
                "duplicates": len(report.duplicates),
                "per_topic": report.per_topic,
            }
            return bool(lease.held().update(dataset=report.dataset, result=result))

        try:
            ref = Dataset.objects.get(pk=ref_id) if ref_id else None
            batch_promote(batch=run.batch, dedup_against=ref, commit_if=keep, **params)
        except Dataset.DoesNotExist:
            run.error = f"dataset {ref_id} to de-duplicate against is gone"
        except ValidationError as exc:
            run.error = validation_text(exc)
        except NotKept:
            return True  # cancelling or lost: the engine ends or leaves the run
        return False

    def counters(self, run: MiningPromotion) -> dict[str, Any]:
        """``n_total``: the candidates (kept documents with a topic); ``n_done``: the
        procedures of the dataset made; both counted from rows."""
        made = MiningPromotion.objects.filter(pk=run.pk).values_list("dataset_id", flat=True)
        dataset_id = made.first()
        kept = MiningDocument.objects.filter(batch_id=run.batch_id, outcome=Outcome.KEPT)
        return {
            "n_total": kept.exclude(topic="").count(),
            "n_done": Procedure.objects.filter(dataset_id=dataset_id).count() if dataset_id else 0,
        }

    def outcome(self, run: MiningPromotion) -> tuple[str, str]:
        return (RunStatus.FAILED, run.error) if run.error else (RunStatus.DONE, "")

    def on_resume(self, run: MiningPromotion) -> None:
        MiningPromotion.objects.filter(pk=run.pk).update(result=None)
