"""Reads for How2Mine batches: yields (Table 6 style), usage and cost, documents, export records."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet, Sum
from django.shortcuts import get_object_or_404

from benchmarks.llm.replay import is_replay
from benchmarks.topics import TOPICS
from mining.models import MiningBatch, MiningDocument, MiningStageUsage
from mining.stages import STAGE_SHORT, STAGES

SCHEMA_VERSION = "how2mine.v1"


def batch_list() -> QuerySet[MiningBatch]:
    return MiningBatch.objects.select_related("created_by").order_by("-created_at", "-id")


def batch_get(*, pk: int) -> MiningBatch:
    return get_object_or_404(MiningBatch, pk=pk)


def _selected(batch: MiningBatch) -> list[tuple[int, str, str]]:
    return [(n, key, label) for n, key, label, _ in STAGES if n in (batch.stages or [])]


YIELDS_CACHE_S = 3600
YIELDS_LIVE_S = 10


def batch_yields(*, batch: MiningBatch) -> dict[str, Any]:
    """Per-stage and per-topic yields: documents retained after each selected stage, as a count
    and as a share of the input documents (seed 000 Table 6: yield relative to the input).
    Counting them reads every document of the batch (one grouped scan, ~100 ms at 70,000), so
    they are cached by the batch's state (status and counters): a finished batch's for an hour
    (they cannot change until it is resumed, which changes its status), an active one's for
    :data:`YIELDS_LIVE_S` (documents move between stages within a chunk)."""
    key = f"mining:yields:{batch.pk}:{batch.status}:{batch.n_done}:{batch.n_total}"
    found = cache.get(key)
    if found is None:
        found = _batch_yields(batch=batch)
        cache.set(key, found, YIELDS_LIVE_S if batch.is_active else YIELDS_CACHE_S)
    return found


def _batch_yields(*, batch: MiningBatch) -> dict[str, Any]:
    stages = _selected(batch)
    aggs: dict[str, Any] = {
        "n": Count("id"),
        "invalid": Count("id", filter=Q(outcome=MiningDocument.Outcome.INVALID)),
        "errors": Count("id", filter=Q(outcome=MiningDocument.Outcome.ERROR)),
        "pending": Count("id", filter=Q(outcome=MiningDocument.Outcome.PENDING)),
        "kept": Count("id", filter=Q(outcome=MiningDocument.Outcome.KEPT)),
    }
    for n, key, _ in stages:
        aggs[f"after_{key}"] = Count("id", filter=Q(last_passed_stage__gte=n))
        aggs[f"dropped_{key}"] = Count(
            "id", filter=Q(stage_reached=key, outcome=MiningDocument.Outcome.DROPPED)
        )
    rows_by_topic = {
        r["topic"]: r
        for r in MiningDocument.objects.filter(batch=batch).values("topic").annotate(**aggs)
    }
    total = {  # the sum of the topics' counts: one scan of the documents, not two
        name: sum(r[name] or 0 for r in rows_by_topic.values()) for name in aggs
    }

    def _row(label: str, r: dict[str, Any]) -> dict[str, Any]:
        n = r["n"] or 0
        cells = []
        for _num, key, stage_label in stages:
            kept = r[f"after_{key}"] or 0
            cells.append(
                {
                    "stage": key,
                    "label": stage_label,
                    "count": kept,
                    "percent": (100.0 * kept / n) if n else 0.0,
                    "dropped": r[f"dropped_{key}"] or 0,
                }
            )
        return {
            "topic": label,
            "n": n,
            "invalid": r["invalid"] or 0,
            "errors": r["errors"] or 0,
            "pending": r["pending"] or 0,
            "kept": r["kept"] or 0,
            "stages": cells,
        }

    names = dict(TOPICS)
    rows = []
    for slug, name in TOPICS:
        if slug in rows_by_topic:
            rows.append(_row(name, rows_by_topic[slug]))
    if "" in rows_by_topic:
        rows.append(_row("(no known topic)", rows_by_topic[""]))
    for slug, r in rows_by_topic.items():
        if slug and slug not in names:
            rows.append(_row(slug, r))
    return {
        "stages": [
            {"number": n, "key": k, "label": lbl, "short": STAGE_SHORT[k]} for n, k, lbl in stages
        ],
        "topics": rows,
        "total": _row("All topics", total),
    }


def batch_usage(*, batch: MiningBatch) -> dict[str, Any]:
    rows = {u.stage: u for u in MiningStageUsage.objects.filter(batch=batch)}
    out = []
    for n, key, label in _selected(batch):
        if key == "prefilter":
            continue
        u = rows.get(key)
        out.append(
            {
                "stage": key,
                "number": n,
                "label": label,
                "model": (batch.backends.get(key) or {}).get("model", ""),
                "replayed": is_replay(batch.backends.get(key)),
                "requests": u.requests if u else 0,
                "failed_requests": u.failed_requests if u else 0,
                "prompt_tokens": u.prompt_tokens if u else 0,
                "completion_tokens": u.completion_tokens if u else 0,
                "cost_usd": u.cost_usd if u else Decimal(0),
            }
        )
    totals = MiningStageUsage.objects.filter(batch=batch).aggregate(
        requests=Sum("requests"),
        prompt_tokens=Sum("prompt_tokens"),
        completion_tokens=Sum("completion_tokens"),
        cost_usd=Sum("cost_usd"),
    )
    return {
        "stages": out,
        "total": {k: v or 0 for k, v in totals.items()},
        "replayed": sorted(
            {str(c.get("recording")) for c in (batch.backends or {}).values() if is_replay(c)}
        ),
    }


def document_list(
    *,
    batch: MiningBatch,
    outcome: str | None = None,
    topic: str | None = None,
    stage: str | None = None,
) -> QuerySet[MiningDocument]:
    qs = MiningDocument.objects.filter(batch=batch).defer("text").order_by("position")
    if outcome:
        qs = qs.filter(outcome=outcome)
    if topic:
        qs = qs.filter(topic=topic)
    if stage:
        qs = qs.filter(stage_reached=stage)
    return qs


def document_outcome(doc: MiningDocument) -> dict[str, Any]:
    """One line of ``manage.py mine`` output / the documents API."""
    return {
        "position": doc.position,
        "id": doc.source_id,
        "topic": doc.topic or doc.topic_raw,
        "outcome": doc.outcome,
        "stage": doc.stage_reached,
        "reason": doc.drop_reason,
        "notes": doc.notes,
        **(
            {"goal": doc.goal, "steps": doc.steps, "resources": doc.resources}
            if doc.outcome == MiningDocument.Outcome.KEPT
            else {}
        ),
    }


def how2mine_record(doc: MiningDocument) -> dict[str, Any]:
    """The reference implementation's how2mine export record."""
    return {
        "schema_version": SCHEMA_VERSION,
        "source_example": {
            "id": doc.source_id,
            "topic": doc.topic_raw or doc.topic,
            "url": doc.url,
            "text": doc.text,
        },
        "processed_example": doc.trace,
        "final_procedure": {"goal": doc.goal, "steps": doc.steps, "resources": doc.resources},
    }


def export_records(*, batch: MiningBatch, chunk_size: int = 500) -> Iterator[dict[str, Any]]:
    qs = MiningDocument.objects.filter(batch=batch, outcome=MiningDocument.Outcome.KEPT).order_by(
        "position"
    )
    for doc in qs.iterator(chunk_size=chunk_size):
        yield how2mine_record(doc)
