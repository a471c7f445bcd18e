"""Bulk inserts compiled once and bound on the server: ``bulk_insert(model, objs)`` inserts
many rows in one ``INSERT ... SELECT * FROM UNNEST(%s::type[], ...)`` statement, as
``bulk_create`` does on PostgreSQL (Django 5.2+), with two differences that matter on a hot
path storing thousands of rows a minute (a judge run's judgments):

- the SQL is compiled by the ORM once per model, fields, conflict mode and database (an UNNEST
  insert's SQL does not depend on the number of rows), not once per batch;
- the values go to the server as bound parameters (psycopg's binary array dumpers, in C), in a
  statement prepared in PostgreSQL (:func:`core.prepared.statement_cursor`), instead of being
  quoted into the SQL text in Python by the client-side binding cursor Django uses by default
  (which cost ~0.1 ms of CPU a row, measured: most of a judge's storing).

Each value goes through its field's ``pre_save`` (``auto_now_add``) and ``get_db_prep_save``
as in ``bulk_create``. No primary keys come back and no signal is sent. Elsewhere than on
PostgreSQL with psycopg 3, with query logging on (DEBUG, a test capturing queries) or for a
model the UNNEST form does not fit, it is ``bulk_create`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections, router
from django.db.models import Model
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery

from core.prepared import server_prepares, statement_cursor

_compiled: dict[tuple, str | None] = {}


def _fields(model: type[Model]) -> list[Any]:
    """The fields ``bulk_create`` inserts for rows without a primary key."""
    opts = model._meta
    return [f for f in opts.concrete_fields if not f.generated and not f.primary_key]


def _sql(model: type[Model], fields: list[Any], alias: str, ignore_conflicts: bool) -> str | None:
    """The UNNEST insert's SQL from the ORM (two sample rows pick the UNNEST form), or ``None``
    when the ORM would not use it for these fields."""
    key = (model, tuple(f.attname for f in fields), alias, ignore_conflicts)
    if key in _compiled:
        return _compiled[key]
    query = InsertQuery(model, on_conflict=OnConflict.IGNORE if ignore_conflicts else None)
    samples = [model(), model()]
    query.insert_values(fields, samples)
    [(sql, params)] = query.get_compiler(alias).as_sql()
    if "UNNEST(" not in sql or len(params) != len(fields) or sql.count("%s") != len(fields):
        sql = None
    else:  # each column's array in binary (element by element in C, no text escaping)
        sql = sql.replace("%s", "%b")
    _compiled[key] = sql
    return sql


def bulk_insert(
    model: type[Model], objs: Sequence[Model], *, ignore_conflicts: bool = False
) -> None:
    """Insert ``objs`` (new rows, no primary key set) in one statement (see the module)."""
    if not objs:
        return
    alias = router.db_for_write(model)
    connection = connections[alias]
    fields = _fields(model)
    sql = None
    if len(objs) > 1 and not connection.queries_logged and server_prepares(connection):
        sql = _sql(model, fields, alias, ignore_conflicts)
    if sql is None:
        model._default_manager.using(alias).bulk_create(objs, ignore_conflicts=ignore_conflicts)
        return
    columns = [
        [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in objs] for f in fields
    ]
    with statement_cursor(connection) as cursor:
        cursor.execute(sql, columns)
    for obj in objs:
        obj._state.adding = False
        obj._state.db = alias
