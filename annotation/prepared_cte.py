"""The item path's writes as single PostgreSQL statements (data-modifying CTEs), composed from
the registered prepared statements of :mod:`annotation.prepared`.

- :data:`CLAIM` / :data:`CLAIM_SEEDED`: an item page's claim in one statement: the pool's head
  locked with ``FOR UPDATE SKIP LOCKED`` (the SQL of :data:`~annotation.prepared.POOL_HEAD`,
  as compiled and checked), the slot taken (never past k), the assignment inserted (the
  fields of :data:`~annotation.prepared.NEW_ASSIGNMENT`); returns the item's row as the pool
  head gives it and the new assignment's id, or nothing (no free item, or the slot taken
  meanwhile). One statement is atomic without BEGIN/COMMIT: the database's constraints (one
  active assignment per participant, an item once) refuse it whole.
- :data:`SUBMIT` / :data:`SUBMIT_KNOWN`: a submit's writes in one statement: the annotation
  inserted (:data:`~annotation.prepared.NEW_ANNOTATION`), the assignment marked submitted
  (:data:`~annotation.prepared.MARK_SUBMITTED`), its draft deleted and, for a regular item,
  the participant's count raised (:data:`~annotation.prepared.COUNT_DONE`); returns the
  annotation's id.

The parts that come from registered statements are checked by ``core.prepared_check``'s system
check; the rest is written from the models' ``_meta`` (table and column names), and the
system check :func:`check_composed_statements` composes every statement (no database needed),
so a renamed or added field fails at ``manage.py check``. PostgreSQL only: other databases
(SQLite for ``make demo``) take the ORM path (:func:`available`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core import checks
from django.db import connections, router

from annotation import prepared
from annotation.models import Assignment, Draft, StudyItem
from core.prepared import (
    PreparedRead,
    PreparedStatement,
    as_in_a_transaction,
    bind,
    statement_cursor,
)
from core.prepared_check import COMPILE_ERRORS


def available(model=Assignment) -> bool:
    """Whether the write database of ``model`` runs the composed statements (PostgreSQL)."""
    return connections[router.db_for_write(model)].vendor == "postgresql"


def _entry(statement: PreparedStatement, alias: str) -> tuple:
    """The registered statement's compiled (sql, params, slots, extra), compiled once."""
    if statement.locking:
        with as_in_a_transaction(alias):
            return statement._compiled.get(alias) or statement._compile(alias)
    return statement._compiled.get(alias) or statement._compile(alias)


def _convert(connection, row: list, converters: Mapping) -> tuple:
    for pos, (convs, expression) in converters.items():
        value = row[pos]
        for convert in convs:
            value = convert(value, expression, connection)
        row[pos] = value
    return tuple(row)


class ComposedClaim:
    """The pool's head claimed in one statement (see the module's docstring)."""

    def __init__(self, name: str, head: PreparedRead) -> None:
        self.name, self.head = name, head
        self._sql: dict[str, str] = {}

    def sql(self, alias: str) -> str:
        if alias in self._sql:
            return self._sql[alias]
        head_sql, _, _, (_, trim) = _entry(self.head, alias)
        if trim is not None:
            raise ValueError(f"{self.name}: the pool head selects extra columns")
        q = connections[alias].ops.quote_name
        item, new = StudyItem._meta, Assignment._meta
        if prepared.ITEM_FULL_PARTS[0][1][0][0] is not item.pk:
            raise ValueError(f"{self.name}: the pool head's first column is not the item's id")
        n_columns = sum(len(columns) for _, columns in prepared.ITEM_FULL_PARTS)
        names = ", ".join(f"c{i}" for i in range(n_columns))
        table, pk = q(item.db_table), q(item.pk.column)
        n_assigned = q(item.get_field("n_assigned").column)
        slot = (
            f"UPDATE {table} SET {n_assigned} = {n_assigned} + 1 "
            f"WHERE {pk} = (SELECT c0 FROM head) AND {n_assigned} < %s RETURNING {pk}"
        )
        fields = prepared.NEW_ASSIGNMENT.fields
        values = ", ".join(f"slot.{pk}" if f.attname == "item_id" else "%s" for f in fields)
        if "item_id" not in [f.attname for f in fields]:
            raise ValueError(f"{self.name}: a new assignment has no item_id")
        insert = (
            f"INSERT INTO {q(new.db_table)} ({', '.join(q(f.column) for f in fields)}) "
            f"SELECT {values} FROM slot RETURNING {q(new.pk.column)}"
        )
        self._sql[alias] = sql = (
            f"WITH head ({names}) AS ({head_sql}), slot AS ({slot}), new AS ({insert}) "
            f"SELECT head.*, new.{q(new.pk.column)} FROM head, new"
        )
        return sql

    def params(self, alias: str, pool: Mapping[str, object], new: Mapping[str, object]) -> list:
        _, head_params, slots, _ = _entry(self.head, alias)
        connection = connections[alias]
        values = [
            f.get_db_prep_save(new[f.attname], connection)
            for f in prepared.NEW_ASSIGNMENT.fields
            if f.attname != "item_id"
        ]
        return [*bind(head_params, slots, pool), pool["overlap"], *values]

    def run(self, *, pool: Mapping[str, object], new: Mapping[str, object]) -> tuple | None:
        """(the item's row as :data:`annotation.prepared.ITEM_FULL_PATHS` lists it, the new
        assignment's id), or None when nothing was claimed. May raise IntegrityError (this
        participant claimed meanwhile in another tab: nothing is written)."""
        alias = router.db_for_write(Assignment)
        connection = connections[alias]
        sql, params = self.sql(alias), self.params(alias, pool, new)
        with statement_cursor(connection) as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        if row is None:
            return None
        _, _, _, (converters, _) = _entry(self.head, alias)
        return _convert(connection, list(row[:-1]), converters), row[-1]


class ComposedSubmit:
    """A submit's writes in one statement (see the module's docstring)."""

    def __init__(self, name: str, *, count_done: bool) -> None:
        self.name, self.count_done = name, count_done
        self._sql: dict[str, str] = {}

    def sql(self, alias: str) -> str:
        if alias in self._sql:
            return self._sql[alias]
        q = connections[alias].ops.quote_name
        insert = prepared.NEW_ANNOTATION.prepared_sql(alias, prepared.NEW_ANNOTATION.samples)[0]
        mark = _entry(prepared.MARK_SUBMITTED, alias)[0]
        draft = Draft._meta
        drop = (
            f"DELETE FROM {q(draft.db_table)} WHERE {q(draft.get_field('assignment').column)} = %s"
        )
        parts = [f"ann AS ({insert})", f"sub AS ({mark})", f"dropped AS ({drop})"]
        if self.count_done:
            parts.append(f"done AS ({_entry(prepared.COUNT_DONE, alias)[0]})")
        self._sql[alias] = sql = f"WITH {', '.join(parts)} SELECT * FROM ann"
        return sql

    def params(
        self, alias: str, annotation: Mapping[str, object], mark: Mapping[str, object]
    ) -> list:
        params = prepared.NEW_ANNOTATION.prepared_sql(alias, annotation)[1]
        _, mark_params, mark_slots, _ = _entry(prepared.MARK_SUBMITTED, alias)
        params += [*bind(mark_params, mark_slots, mark), mark["pk"]]
        if self.count_done:
            _, done_params, done_slots, _ = _entry(prepared.COUNT_DONE, alias)
            params += bind(done_params, done_slots, {"pk": annotation["participant_id"]})
        return params

    def run(self, *, annotation: Mapping[str, object], mark: Mapping[str, object]) -> Any:
        """The new annotation's id; ``annotation``: its field values (by attname); ``mark``:
        :data:`~annotation.prepared.MARK_SUBMITTED`'s values (pk, now, active_ms)."""
        alias = router.db_for_write(Assignment)
        with statement_cursor(connections[alias]) as cursor:
            cursor.execute(self.sql(alias), self.params(alias, annotation, mark))
            return cursor.fetchone()[0]


CLAIM = ComposedClaim("annotation.claim", prepared.POOL_HEAD)
CLAIM_SEEDED = ComposedClaim("annotation.claim_seeded", prepared.POOL_HEAD_SEEDED)
SUBMIT = ComposedSubmit("annotation.submit", count_done=True)
SUBMIT_KNOWN = ComposedSubmit("annotation.submit_known", count_done=False)
COMPOSED = (CLAIM, CLAIM_SEEDED, SUBMIT, SUBMIT_KNOWN)


def check_composed_statements(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """The system check: every composed statement composes on PostgreSQL with its parts'
    sample values, its placeholders matching its parameters (``annotation.E001``)."""
    errors: list[checks.CheckMessage] = []
    for alias in {router.db_for_write(Assignment)}:
        if connections[alias].vendor != "postgresql":
            continue
        samples = {
            "pool": {"study_id": 1, "overlap": 2, "participant_id": 3},
            "new": dict(prepared.NEW_ASSIGNMENT.samples),
            "annotation": dict(prepared.NEW_ANNOTATION.samples),
            "mark": dict(prepared.MARK_SUBMITTED.samples),
        }
        for statement in COMPOSED:
            try:
                sql = statement.sql(alias)
                if isinstance(statement, ComposedClaim):
                    params = statement.params(alias, samples["pool"], samples["new"])
                else:
                    params = statement.params(alias, samples["annotation"], samples["mark"])
                if sql.count("%s") != len(params):
                    raise ValueError(f"{sql.count('%s')} placeholders, {len(params)} parameters")
            except COMPILE_ERRORS as exc:
                errors.append(
                    checks.Error(
                        f"composed statement {statement.name} on {alias!r}: "
                        f"{type(exc).__name__}: {exc}",
                        hint="The models changed under annotation.prepared_cte; adapt it.",
                        obj=statement.name,
                        id="annotation.E001",
                    )
                )
    return errors
