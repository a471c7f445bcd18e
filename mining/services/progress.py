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
import psycopg
from django.db import connection, transaction
from django.db.models import Case, F, QuerySet, TextField, Value, When
from django.db.models.functions import Cast
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


# what doc_state reads of a document, besides its text (see for_the_pipeline)
STATE_FIELDS = (
    "pk",
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


def for_the_pipeline(documents: QuerySet, *also: str, text: bool = True) -> QuerySet:
    """``documents`` read for :func:`doc_state`: the columns it needs (and ``also``), and the
    document's text only where a prompt may hold it: while stage 1 lies ahead of the document
    (extraction is the only prompt with the document in it), and never with ``text=False`` (a
    reply is applied without it). The text is most of a row, so this is most of what a chunk
    or a batch file reads."""
    none = Value("", output_field=TextField())
    prompt_text = Case(When(last_passed_stage=0, then=F("text")), default=none) if text else none
    return documents.only(*STATE_FIELDS, *also).annotate(prompt_text=prompt_text)


def doc_state(doc: MiningDocument) -> DocState:
    """A pending document as the pipeline sees it (read by :func:`for_the_pipeline`): from its
    input, or from where a stored execution left it (``last_passed_stage``, trace, current
    goal/steps/resources): what :func:`snapshot` stored, read back (the chunks and the batch
    mode resume documents so)."""
    return _state(
        doc.pk,
        doc.prompt_text,
        doc.last_passed_stage,
        doc.stage_reached,
        (doc.input_goal, doc.input_steps, doc.input_resources),
        (doc.goal, doc.steps, doc.resources, doc.trace),
    )


def _state(key, text, last_passed, stage_reached, given, reached) -> DocState:
    goal, steps, resources, trace = reached if last_passed else (*given, {})
    return DocState(
        key=key,
        text=text,
        goal=goal,
        steps=list(steps or []),
        resources=list(resources or []),
        trace=dict(trace or {}),
        stage_reached=stage_reached if last_passed else "",
        last_passed_stage=last_passed,
    )


_PLAIN = ("pk", "prompt_text", "last_passed_stage", "stage_reached", "input_goal", "goal")
_JSON = ("input_steps", "input_resources", "steps", "resources", "trace")


def read_states(documents: QuerySet, *, text: bool = True) -> list[DocState]:
    """``documents`` as :func:`doc_state` would make them, read as values: no model instances,
    and the JSON columns read as text and decoded by orjson (model instances and the standard
    library's decoder were a third of the worker's time storing a provider's file)."""
    rows = for_the_pipeline(documents, text=text).values_list(
        *_PLAIN, *(Cast(name, TextField()) for name in _JSON)
    )
    states = []
    for row in rows:
        key, prompt_text, last_passed, stage_reached, input_goal, goal = row[: len(_PLAIN)]
        input_steps, input_resources, steps, resources, trace = map(
            orjson.loads, row[len(_PLAIN) :]
        )
        given = (input_goal, input_steps, input_resources)
        reached = (goal, steps, resources, trace)
        states.append(_state(key, prompt_text, last_passed, stage_reached, given, reached))
    return states


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
        # one array a column (unnest), sent in binary: a fifth of the time of a VALUES list of
        # nine values a document, in the driver and the database together
        types = ("varchar", "varchar", "int", "text", "jsonb", "text", "jsonb", "jsonb")
        names = ["id", *_doc_columns()]
        sets = ", ".join(f"{_qn(c)} = v.{_qn(c)}" for c in names[1:])
        arrays = ", ".join(f"%b::{t}[]" for t in ("bigint", *types))
        sql.append(
            f", docs AS (UPDATE {doc} AS d SET {sets}, {_qn('updated_at')} = %s "
            f"FROM unnest({arrays}) AS v({', '.join(_qn(c) for c in names)}), held "
            f"WHERE d.{_qn('id')} = v.{_qn('id')} AND d.{_qn('outcome')} = %s)"
        )
        params.append(now)
        columns: list[list] = [list(latest)] + [[] for _ in types]
        for row in latest.values():
            for i, value in enumerate(row):
                columns[i + 1].append(orjson.dumps(value).decode() if i in (4, 6, 7) else value)
        params.extend(columns)
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
    with connection.cursor() as cursor, connection.wrap_database_errors:
        # psycopg's own cursor on Django's connection (its transaction): the parameters are
        # bound by the server, so the arrays travel in binary instead of as quoted literals
        raw = psycopg.Cursor(cursor.cursor.connection)
        raw.execute("".join(sql), params)
        return bool(raw.fetchone()[0])


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
