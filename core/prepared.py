"""Prepared statements: a QuerySet compiled to SQL by the ORM once per process and database,
then run again and again with new values.

Building a QuerySet and compiling it costs 10-30 times more CPU than running a small indexed
query, so the few reads and updates a hot path runs thousands of times an hour are compiled
once. ``build(**values)`` returns the QuerySet (for an update: the QuerySet and the values to
set); it is called once with *sentinel* values, which mark where each keyword's value goes
among the compiled parameters (pick values no constant of the query has, inside the 32-bit
integer range, else the ORM may compile the lookup away). Rows come back as the ORM gives them:
the same columns in the same order, through the same converters.

This leans on ORM internals (``Query.get_compiler``, ``SQLCompiler.select``, ``UpdateQuery``).
Every statement is kept in :data:`registry` under a unique name; the system check of
:mod:`core.prepared_check` compiles each one and compares it with the ORM's compilation, so a
Django upgrade that compiles differently fails loudly. Apps define their statements in a
``prepared`` module (``<app>/prepared.py``), which the check imports. Column order: since Django 5.2 ``values_list(*names)`` selects the columns in the
order the names are given, annotations included, and the ORM returns them as selected; so does
:class:`PreparedRead` (it never reorders), and ``core.E002`` catches a Django that does not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.models import Model, QuerySet
from django.db.models.sql import InsertQuery, UpdateQuery

_CONSTANT = object()


class PreparedStatementError(RuntimeError):
    """A statement that cannot be prepared (a sentinel not found among the parameters)."""


class ColumnOrderError(PreparedStatementError):
    """The compiled columns are not the ones the QuerySet names, in its order."""


def _param_key(value: object) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        return (int, int(value))
    return (type(value), value)


def _as_is(value: object) -> object:
    return value


def bind_plan(params, sentinels: Mapping[str, object], ops: Any = None) -> list:
    """Where each keyword goes among compiled parameters: (name, type) per slot, the type being
    the one the backend wrapped the sentinel in (psycopg's Int4) so new values are bound alike
    (a datetime as it comes: no wrapper); a constant marker for the query's own constants.
    ``ops`` (the connection's ``ops``): a backend that compiles a datetime to another value
    (SQLite: a string) has that value found too, and new datetimes adapted the same way."""
    by_value = {_param_key(v): (name, None) for name, v in sentinels.items()}
    for name, value in sentinels.items():
        if ops is not None and isinstance(value, datetime):
            adapted = ops.adapt_datetimefield_value(value)
            if adapted is not value:
                by_value.setdefault(_param_key(adapted), (name, ops.adapt_datetimefield_value))
    slots = []
    for p in params:
        found = by_value.get(_param_key(p))
        if found is None:
            slots.append(_CONSTANT)
        else:
            name, adapt = found
            slots.append((name, adapt or (type(p) if isinstance(p, int | str) else _as_is)))
    missing = set(sentinels) - {slot[0] for slot in slots if slot is not _CONSTANT}
    if missing:
        raise PreparedStatementError(f"prepared query: parameters {sorted(missing)} not found")
    return slots


def bind(params, slots: list, values: Mapping[str, object]) -> list:
    """The compiled parameters with each keyword's slot filled from ``values``."""
    return [
        p if slot is _CONSTANT else slot[1](values[slot[0]])
        for p, slot in zip(params, slots, strict=True)
    ]


def _default_samples(sentinels: Mapping[str, object]) -> dict[str, object]:
    samples: dict[str, object] = {}
    for n, (name, value) in enumerate(sentinels.items(), start=1):
        if isinstance(value, int) and not isinstance(value, bool):
            samples[name] = 100 + n
        elif isinstance(value, str):
            samples[name] = f"sample-{name}"
        else:
            raise ValueError(f"prepared statement: give a sample value for {name!r}")
    return samples


# --- running them as PostgreSQL prepared statements --------------------------------------------

# psycopg's own automatic preparation stays off (Django turns it off: prepare_threshold None);
# only the statements below ask for it, one by one (prepare=True).
_NO_AUTOMATIC_PREPARE = 2**31 - 1


def server_prepares(connection) -> bool:
    """Whether this connection runs the statements as server-side prepared statements:
    PostgreSQL with psycopg 3, unless the settings say no (``DB_SERVER_PREPARED``; off behind
    pgbouncer in transaction pooling, which cannot keep a statement between transactions)."""
    return (
        connection.vendor == "postgresql"
        and connection.Database.__name__ == "psycopg"
        and getattr(settings, "DB_SERVER_PREPARED", True)
    )


@functools.cache
def _preparing_cursor_class():
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        """Server-side binding, and the statement prepared in PostgreSQL on its first run on
        the connection (parsed and planned once; later runs send only the values)."""

        def execute(self, query, params=None, *, prepare=True, binary=None):
            return super().execute(query, params, prepare=prepare, binary=binary)

    return PreparingCursor


def statement_cursor(connection):
    """A cursor of ``connection`` for a prepared statement: on PostgreSQL (psycopg 3) one that
    prepares it in the server, wrapped as Django wraps its own (execute wrappers, error
    conversion); else, and while queries are logged (DEBUG, a test capturing them: the log
    shows each query with its values), an ordinary cursor."""
    if connection.queries_logged or not server_prepares(connection):
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = _NO_AUTOMATIC_PREPARE
    connection.validate_thread_sharing()
    return connection.make_cursor(_preparing_cursor_class()(raw))


class PreparedStatement:
    """What reads and updates share: the name, model, builder, sentinels and sample values,
    the compiled entry per database alias, and the comparison the system check makes."""

    def __init__(
        self,
        name: str,
        *,
        model: type[Model],
        build: Callable[..., Any],
        sentinels: Mapping[str, object],
        samples: Mapping[str, object] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.sentinels = dict(sentinels)
        self.samples = dict(samples) if samples is not None else _default_samples(sentinels)
        if set(self.samples) != set(self.sentinels):
            raise ValueError(f"prepared statement {name}: samples must name the sentinels")
        self._build = build
        self._compiled: dict[str, tuple] = {}
        registry.add(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    # What each kind compiles: (sql, params, what else the kind needs to run it).
    def _orm_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, tuple, Any]:
        raise NotImplementedError

    @property
    def locking(self) -> bool:
        """Whether it locks rows (compiled and run inside a transaction only)."""
        return False

    def alias(self) -> str:
        return router.db_for_write(self.model)

    def _compile(self, alias: str) -> tuple:
        sql, params, extra = self._orm_sql(alias, self.sentinels)
        entry = (sql, params, bind_plan(params, self.sentinels, connections[alias].ops), extra)
        self._compiled[alias] = entry
        return entry

    def prepared_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, list]:
        """The statement's SQL and bound parameters for ``values`` (compiled once)."""
        sql, params, slots, _ = self._compiled.get(alias) or self._compile(alias)
        return sql, bind(params, slots, values)

    def orm_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, list]:
        """What the ORM compiles for the QuerySet built with ``values`` (for comparison)."""
        sql, params, _ = self._orm_sql(alias, values)
        return sql, list(params)


class PreparedRead(PreparedStatement):
    """A ``values_list`` read; :meth:`rows` returns its rows as tuples, as the ORM would. A
    locking read (``select_for_update``) runs on the write database."""

    def __init__(self, name: str, **kwargs) -> None:
        super().__init__(name, **kwargs)
        self._locking: bool | None = None

    @property
    def locking(self) -> bool:
        if self._locking is None:
            self._locking = bool(self._build(**self.sentinels).query.select_for_update)
        return self._locking

    def alias(self) -> str:
        return router.db_for_write(self.model) if self.locking else router.db_for_read(self.model)

    def _orm_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, tuple, Any]:
        qs: QuerySet = self._build(**values)
        compiler = qs.query.get_compiler(alias)
        sql, params = compiler.as_sql()
        selected = compiler.select[: compiler.col_count]
        columns = [name for _, _, name in selected]
        if qs._fields and list(qs._fields) != columns:
            raise ColumnOrderError(
                f"prepared read {self.name}: the SQL selects {columns}, "
                f"the QuerySet names {list(qs._fields)}"
            )
        converters = compiler.get_converters([col for col, _, _ in selected])
        trim = compiler.col_count if compiler.has_extra_select else None
        return sql, params, (converters, trim)

    def rows(self, **values: object) -> list[tuple]:
        locking = self._locking if self._locking is not None else self.locking
        alias = router.db_for_write(self.model) if locking else router.db_for_read(self.model)
        sql, params, slots, (converters, trim) = self._compiled.get(alias) or self._compile(alias)
        connection = connections[alias]
        with statement_cursor(connection) as cursor:
            cursor.execute(sql, bind(params, slots, values))
            rows = cursor.fetchall()
        if trim is not None:
            rows = [row[:trim] for row in rows]
        if not converters:
            return [tuple(row) for row in rows]
        out = []
        for row in rows:
            row = list(row)
            for pos, (convs, expression) in converters.items():
                value = row[pos]
                for convert in convs:
                    value = convert(value, expression, connection)
                row[pos] = value
            out.append(tuple(row))
        return out


class PreparedUpdate(PreparedStatement):
    """An UPDATE; ``build(**values)`` returns the QuerySet to update and the values to set;
    :meth:`run` returns the number of rows updated. Runs on the write database."""

    def _orm_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, tuple, Any]:
        qs, updates = self._build(**values)
        query = qs.query.chain(UpdateQuery)
        query.add_update_values(updates)
        sql, params = query.get_compiler(alias).as_sql()
        return sql, params, None

    def run(self, **values: object) -> int:
        alias = router.db_for_write(self.model)
        sql, params, slots, _ = self._compiled.get(alias) or self._compile(alias)
        with statement_cursor(connections[alias]) as cursor:
            cursor.execute(sql, bind(params, slots, values))
            return cursor.rowcount


class PreparedInsert(PreparedStatement):
    """An INSERT of one row with a value for each of ``fields`` (attnames; default: every
    concrete field but an auto primary key, as ``Model.objects.create`` inserts),
    ``RETURNING`` the primary key: :meth:`run` returns it. Each value goes through its field's
    ``get_db_prep_save`` as the ORM's does (JSON, dates); no instance is made and no save
    signal is sent. Runs on the write database; ``samples`` gives a value for every field."""

    def __init__(
        self,
        name: str,
        *,
        model: type[Model],
        samples: Mapping[str, object],
        fields: tuple[str, ...] | None = None,
    ) -> None:
        opts = model._meta
        names = fields or tuple(
            f.attname for f in opts.concrete_fields if not (f.primary_key and f.auto_created)
        )
        self.fields = [opts.get_field(name) for name in names]
        super().__init__(name, model=model, build=None, sentinels=samples, samples=samples)

    def _orm_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, tuple, Any]:
        query = InsertQuery(self.model)
        query.insert_values(self.fields, [self.model(**values)])
        compiler = query.get_compiler(alias)
        compiler.returning_fields = [self.model._meta.pk]
        [(sql, params)] = compiler.as_sql()
        return sql, params, None

    def _compile(self, alias: str) -> tuple:
        sql, _, _ = self._orm_sql(alias, self.samples)
        self._compiled[alias] = entry = (sql, None, None, None)
        return entry

    def prepared_sql(self, alias: str, values: Mapping[str, object]) -> tuple[str, list]:
        sql = (self._compiled.get(alias) or self._compile(alias))[0]
        connection = connections[alias]
        return sql, [f.get_db_prep_save(values[f.attname], connection) for f in self.fields]

    def run(self, **values: object) -> Any:
        alias = router.db_for_write(self.model)
        sql, params = self.prepared_sql(alias, values)
        with statement_cursor(connections[alias]) as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()[0]

    def insert(self, instance: Model) -> Model:
        """Insert ``instance`` (its values of the fields): it gets its primary key and counts as
        saved, as after ``create`` (no save signal is sent)."""
        instance.pk = self.run(**{f.attname: getattr(instance, f.attname) for f in self.fields})
        instance._state.adding = False
        instance._state.db = router.db_for_write(self.model)
        return instance


def model_columns(
    model: type[Model], prefix: str = "", leave_out: tuple[str, ...] = ()
) -> list[tuple[Any, str]]:
    """A model's loaded fields (in model order), each with its ``values_list`` path under
    ``prefix`` (``"item__"``): the columns a read selects to rebuild instances of it."""
    fields = [f for f in model._meta.concrete_fields if f.name not in leave_out]
    return [(f, prefix + f.attname) for f in fields]


def model_instances(
    alias: str, row: tuple, parts: list[tuple[type[Model], list[tuple[Any, str]]]]
) -> list[Model]:
    """Model instances from consecutive slices of ``row`` (one slice per ``(model, columns)``
    part, as :func:`model_columns` lists them), made by ``from_db`` as the ORM makes them."""
    out, start = [], 0
    for model, columns in parts:
        values = row[start : start + len(columns)]
        out.append(model.from_db(alias, [f.attname for f, _ in columns], values))
        start += len(columns)
    return out


class Registry(Mapping[str, PreparedStatement]):
    """Every prepared statement of the project, by name (a name is taken once)."""

    def __init__(self) -> None:
        self._statements: dict[str, PreparedStatement] = {}

    def add(self, statement: PreparedStatement) -> None:
        if statement.name in self._statements:
            raise ValueError(f"a prepared statement named {statement.name!r} already exists")
        self._statements[statement.name] = statement

    def remove(self, name: str) -> None:
        del self._statements[name]

    def __getitem__(self, name: str) -> PreparedStatement:
        return self._statements[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._statements)

    def __len__(self) -> int:
        return len(self._statements)


registry = Registry()


@contextmanager
def as_in_a_transaction(alias: str) -> Iterator[None]:
    """Compiling SELECT ... FOR UPDATE, the ORM asks the connection whether it is inside a
    transaction (and refuses outside one), which opens a connection. Where a locking statement is
    only compiled (the system check, a composed statement's SQL), the connection answers
    "inside one" without being opened."""
    connection = connections[alias]
    connection.get_autocommit = lambda: False
    try:
        yield
    finally:
        del connection.get_autocommit
