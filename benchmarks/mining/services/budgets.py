"""A batch's per-topic budgets applied to its rows (:mod:`benchmarks.mining.budgets`): which
pending documents the next chunk takes, and closing the topics whose budget is spent.

Counted from the rows each time (one grouped query): a candidate is a document of the topic
that went into the stages (any outcome but pending, invalid input or left by its budget), a
valid one a kept document.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from benchmarks.mining.budgets import BUDGET_STAGE, budgets_of, plan_chunk
from benchmarks.mining.models import MiningBatch, MiningDocument

Outcome = MiningDocument.Outcome
CHUNK_FIELDS = ("pk", "text", "input_goal", "input_steps", "input_resources")


def topic_counts(*, batch: MiningBatch) -> dict[str, dict[str, int]]:
    """topic -> {pending, candidates, valid}, counted from the batch's rows."""
    rows = (
        MiningDocument.objects.filter(batch=batch)
        .values("topic")
        .annotate(
            pending=Count("id", filter=Q(outcome=Outcome.PENDING)),
            candidates=Count(
                "id",
                filter=~Q(outcome__in=[Outcome.PENDING, Outcome.INVALID])
                & ~Q(stage_reached=BUDGET_STAGE),
            ),
            valid=Count("id", filter=Q(outcome=Outcome.KEPT)),
        )
    )
    return {r["topic"]: {k: r[k] for k in ("pending", "candidates", "valid")} for r in rows}


def chunk_documents(*, batch: MiningBatch, size: int) -> list[MiningDocument]:
    """The pending documents the next chunk works, at most ``size``, in input order; with
    budgets, no topic beyond what it has left, and the pending documents of a topic whose
    budget is spent closed (dropped at stage ``budget``, the reason named)."""
    pending = MiningDocument.objects.filter(batch=batch, outcome=Outcome.PENDING)
    budgets = budgets_of(batch.options or {})
    if not budgets.active:
        return list(pending.order_by("pk").only(*CHUNK_FIELDS)[:size])
    take, closed = plan_chunk(budgets, topic_counts(batch=batch), size)
    if closed:
        with transaction.atomic():
            for topic, reason in closed.items():
                pending.filter(topic=topic).update(
                    outcome=Outcome.DROPPED,
                    stage_reached=BUDGET_STAGE,
                    drop_reason=f"budget: topic {topic or '(none)'}: {reason}",
                    updated_at=timezone.now(),
                )
    docs: list[MiningDocument] = []
    for topic, n in take.items():
        docs.extend(pending.filter(topic=topic).order_by("pk").only(*CHUNK_FIELDS)[:n])
    docs.sort(key=lambda d: d.pk)
    return docs[:size]
