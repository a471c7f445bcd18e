"""Storing a mining chunk's progress as replies arrive (the writer thread of
:mod:`mining.services.execution`).

Each write takes what the flow handed over since the last one: every document as last seen
(trace so far, outcome, current goal/steps/resources; one still pending resumes after its
``last_passed_stage``) and the usage of every reply. It lands whole or not at all, and only
while this execution holds the batch's lease: the batch row is written first (its lock keeps a
take-over out until the write commits; no row means the lease is gone and nothing is written).
On PostgreSQL that is one statement (data-modifying CTEs: one round trip, its own transaction;
each request slot waits for this write, so its cost is the run's pace), elsewhere one
transaction of three statements.

The batch's live counters (documents done, tokens, cost) are not added here: they are counted
from the documents and the usage rows after a write (:class:`core.runs.progress.LiveCounters`,
the way every run type reports progress) and again at each chunk's end.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson
from django.db import connection, transaction
from django.utils import timezone

from core.runs.engine import Lease
from core.runs.models import RunLane
from mining.costs import cost_usd
from mining.documents import DocState, StageUsage
from mining.models import MiningBatch, MiningDocument, MiningStageUsage

Outcome = MiningDocument.Outcome
# what a write sets on a document, in snapshot order (then updated_at)
SAVED_FIELDS = (
    "outcome",
    "stage_reached",
    "last_passed_stage",
    "drop_reason",
    "trace",
    "goal",
    "steps",
    "resources",
)
_USAGE_COUNTS = ("requests", "failed_requests", "prompt_tokens", "completion_tokens", "cost_usd")


def snapshot(doc: DocState, stage: str | None, usage: StageUsage | None) -> tuple:
    """What a write stores of ``doc`` now (copied: the flow goes on changing the document), with
    the stage and usage of the reply that brought it here (None for none)."""
    row = (
        doc.outcome,
        doc.stage_reached,
        doc.last_passed_stage,
        doc.reason,
        dict(doc.trace),
        doc.goal,
        list(doc.steps),
        list(doc.resources),
    )
    return doc.key, row, stage, usage


def doc_state(doc: MiningDocument) -> DocState:
    """A pending document as the pipeline sees it: from its input, or from where a stored
    execution left it (``last_passed_stage``, trace, current goal/steps/resources): what
    :func:`snapshot` stored, read back (the chunks and the batch mode resume documents so)."""
    resumed = bool(doc.last_passed_stage)
    return DocState(
        key=doc.pk,
        text=doc.text,
        goal=doc.goal if resumed else doc.input_goal,
        steps=list((doc.steps if resumed else doc.input_steps) or []),
        resources=list((doc.resources if resumed else doc.input_resources) or []),
        trace=dict(doc.trace or {}) if resumed else {},
        stage_reached=doc.stage_reached if resumed else "",
        last_passed_stage=doc.last_passed_stage,
    )


def is_reply(result: tuple) -> bool:
    """Whether a snapshot came with a reply (it then holds a request slot until written)."""
    return result[2] is not None


@dataclass
class _Spent(StageUsage):
    cost: Decimal = Decimal(0)


def _counts(u: _Spent, *, adapt: bool = False) -> tuple:
    cost = connection.ops.adapt_decimalfield_value(u.cost, 14, 6) if adapt else u.cost
    return (u.requests, u.failed_requests, u.prompt_tokens, u.completion_tokens, cost)


def store(batch: MiningBatch, lease: Lease, results: list[tuple]) -> bool:
    """Write ``results`` (snapshots, oldest first); False when this execution no longer holds
    the batch (nothing written)."""
    latest: dict[Any, tuple] = {}
    usage: dict[str, _Spent] = {}
    for key, row, stage, used in results:
        latest[key] = row
        if used is not None:
            usage.setdefault(stage, _Spent()).add(used)
    for stage, spent in usage.items():
        spent.cost = cost_usd(
            batch.backends.get(stage), spent.prompt_tokens, spent.completion_tokens
        )
    if connection.vendor == "postgresql":
        return _store_in_one_statement(batch, lease, latest, usage)
    with transaction.atomic():
        held = lease.held().update(heartbeat_at=timezone.now())  # the batch's, or its lane's
        if not held:
            return False
        _update_documents(latest)
        _add_usage(batch, usage)
    return True


def _qn(name: str) -> str:
    return connection.ops.quote_name(name)


def _doc_columns() -> list[str]:
    return [MiningDocument._meta.get_field(name).column for name in SAVED_FIELDS]


def _store_in_one_statement(batch, lease, latest, usage) -> bool:
    run, doc, use = (_qn(m._meta.db_table) for m in (MiningBatch, MiningDocument, MiningStageUsage))
    now = timezone.now()
    if lease.lane is None:
        params: list[Any] = [now, batch.pk, lease.token]
        sql = [
            f"WITH held AS (UPDATE {run} SET {_qn('heartbeat_at')} = %s "
            f"WHERE {_qn('id')} = %s AND {_qn('lease_owner')} = %s RETURNING {_qn('id')})"
        ]
    else:  # a batch worked in lanes: this execution's lane is what it holds
        params = [now, MiningBatch._meta.label, batch.pk, lease.lane, lease.token]
        sql = [
            f"WITH held AS (UPDATE {_qn(RunLane._meta.db_table)} SET {_qn('heartbeat_at')} = %s "
            f"WHERE {_qn('run_label')} = %s AND {_qn('run_id')} = %s AND {_qn('lane')} = %s "
            f"AND {_qn('lease_owner')} = %s RETURNING {_qn('run_id')})"
        ]
    if latest:
        types = ("varchar", "varchar", "int", "text", "jsonb", "text", "jsonb", "jsonb")
        row_sql = "(%s::bigint, " + ", ".join(f"%s::{t}" for t in types) + ")"
        names = ["id", *_doc_columns()]
        sets = ", ".join(f"{_qn(c)} = v.{_qn(c)}" for c in names[1:])
        sql.append(
            f", docs AS (UPDATE {doc} AS d SET {sets}, {_qn('updated_at')} = %s "
            f"FROM (VALUES {', '.join([row_sql] * len(latest))}) "
            f"AS v({', '.join(_qn(c) for c in names)}), held "
            f"WHERE d.{_qn('id')} = v.{_qn('id')} AND d.{_qn('outcome')} = %s)"
        )
        params.append(now)
        for key, row in latest.items():
            params.append(key)
            params.extend(
                orjson.dumps(value).decode() if i in (4, 6, 7) else value
                for i, value in enumerate(row)
            )
        params.append(Outcome.PENDING)
    if usage:
        row_sql = "(%s::bigint, %s::varchar, %s::int, %s::int, %s::bigint, %s::bigint, %s::numeric)"
        columns = ["batch_id", "stage", *_USAGE_COUNTS]
        adds = ", ".join(f"{_qn(c)} = {use}.{_qn(c)} + excluded.{_qn(c)}" for c in _USAGE_COUNTS)
        sql.append(
            f", spent AS (INSERT INTO {use} ({', '.join(_qn(c) for c in columns)}) "
            f"SELECT v.* FROM (VALUES {', '.join([row_sql] * len(usage))}) AS v, held "
            f"ON CONFLICT ({_qn('batch_id')}, {_qn('stage')}) DO UPDATE SET {adds})"
        )
        for stage, u in sorted(usage.items()):
            params.extend((batch.pk, stage, *_counts(u)))
    sql.append(" SELECT count(*) FROM held")
    with connection.cursor() as cursor:
        cursor.execute("".join(sql), params)
        return bool(cursor.fetchone()[0])


def _update_documents(rows: dict[Any, tuple]) -> None:
    """One parameterised UPDATE per document still pending, sent with executemany."""
    fields = [MiningDocument._meta.get_field(name) for name in (*SAVED_FIELDS, "updated_at")]
    sets = ", ".join(f"{_qn(f.column)} = %s" for f in fields)
    sql = (
        f"UPDATE {_qn(MiningDocument._meta.db_table)} SET {sets} "
        f"WHERE {_qn('id')} = %s AND {_qn('outcome')} = %s"
    )
    now = timezone.now()
    params = [
        [f.get_db_prep_save(v, connection) for f, v in zip(fields, (*row, now), strict=True)]
        + [key, Outcome.PENDING]
        for key, row in rows.items()
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _add_usage(batch: MiningBatch, usage: dict[str, _Spent]) -> None:
    """Add each stage's usage to its row (created when missing) in one statement."""
    if not usage:
        return
    table = _qn(MiningStageUsage._meta.db_table)
    rows = [(batch.pk, stage, *_counts(u, adapt=True)) for stage, u in sorted(usage.items())]
    columns = ", ".join(_qn(c) for c in ("batch_id", "stage", *_USAGE_COUNTS))
    values = ", ".join("(" + ", ".join(["%s"] * 7) + ")" for _ in rows)
    adds = ", ".join(f"{_qn(c)} = {table}.{_qn(c)} + excluded.{_qn(c)}" for c in _USAGE_COUNTS)
    sql = (
        f"INSERT INTO {table} ({columns}) VALUES {values} "
        f"ON CONFLICT ({_qn('batch_id')}, {_qn('stage')}) DO UPDATE SET {adds}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for row in rows for value in row])
