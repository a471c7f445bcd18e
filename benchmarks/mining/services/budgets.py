"""A batch's per-topic budgets applied to its rows (:mod:`benchmarks.mining.budgets`): which
pending documents the next chunk takes, and closing the topics whose budget is spent.

Counted from the rows each time (one grouped query): a candidate is a document of the topic
that went into the stages (any outcome but pending, invalid input or left by its budget), a
valid one a kept document.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from benchmarks.mining.budgets import BUDGET_STAGE, budgets_of, plan_chunk
from benchmarks.mining.models import MiningBatch, MiningDocument

Outcome = MiningDocument.Outcome
# a pending document may have been stored mid-way (it resumes after last_passed_stage)
CHUNK_FIELDS = (
    "pk",
    "topic",
    "text",
    "input_goal",
    "input_steps",
    "input_resources",
    "last_passed_stage",
    "stage_reached",
    "trace",
    "goal",
    "steps",
    "resources",
)


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


def chunk_documents(
    *, batch: MiningBatch, size: int, after: int = 0, taken: Mapping[str, int] | None = None
) -> list[MiningDocument]:
    """The pending documents the chunk works next, at most ``size``, in input order, after
    primary key ``after`` (the last one this execution took); with budgets, no topic beyond
    what it has left, counting ``taken`` (topic -> documents this execution took and has not
    stored as finished), and the pending documents of a topic whose budget is spent that this
    execution never took closed (dropped at stage ``budget``, the reason named)."""
    pending = MiningDocument.objects.filter(batch=batch, outcome=Outcome.PENDING, pk__gt=after)
    budgets = budgets_of(batch.options or {})
    if not budgets.active:
        return list(pending.order_by("pk").only(*CHUNK_FIELDS)[:size])
    counts = topic_counts(batch=batch)
    # documents taken and not yet stored as finished: candidates already; each may still turn
    # out valid, so a topic takes no more than it has left even if all of them do (it is
    # closed only on what is stored)
    maybe = {t: dict(c) for t, c in counts.items()}
    for topic, n in (taken or {}).items():
        if topic in counts:
            for c in (counts[topic], maybe[topic]):
                c["candidates"] += n
                c["pending"] = max(0, c["pending"] - n)
            maybe[topic]["valid"] += n
    closed = plan_chunk(budgets, counts, size)[1]
    take = plan_chunk(budgets, maybe, size)[0]
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
