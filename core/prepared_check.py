"""The system check of prepared statements (:mod:`core.prepared`), run by ``manage.py check``
and at server start: :func:`check_prepared_statements` compiles every registered statement with
its sentinels, binds its *sample* values, and compares SQL, parameters (types included) and
result columns with what the ORM makes of the QuerySet built with those samples:

- ``core.E001``: the SQL or the parameters differ from the ORM's;
- ``core.E002``: the rows' columns are not the ones, in the order, the QuerySet names;
- ``core.E003``: the statement cannot be prepared (a sentinel is not among the parameters, or
  building or compiling it fails).

The check compiles only: it needs no database connection. It imports each app's ``prepared``
module (``<app>/prepared.py``), where the app defines its statements.
"""

from __future__ import annotations

from django.core import checks
from django.core.exceptions import EmptyResultSet, FieldError
from django.db import DatabaseError
from django.utils.module_loading import autodiscover_modules

from core.prepared import (
    ColumnOrderError,
    PreparedStatement,
    PreparedStatementError,
    as_in_a_transaction,
    registry,
)

CHECK_TAG = "prepared_statements"

# What building or compiling a statement may raise when the ORM changed under it: reported by
# the check as core.E003 instead of ending it with a traceback.
COMPILE_ERRORS = (
    PreparedStatementError,
    FieldError,
    EmptyResultSet,
    DatabaseError,
    AttributeError,
    KeyError,
    TypeError,
    ValueError,
)


def _typed(params) -> list[tuple[type, object]]:
    # a JSON parameter is a wrapper (psycopg's Jsonb) around the value: compare the values
    return [(type(p), getattr(p, "obj", p)) for p in params]


def _cannot_prepare(statement: PreparedStatement, what: str, exc: Exception) -> checks.Error:
    return checks.Error(
        f"{what}: {type(exc).__name__}: {exc}",
        hint="Choose sentinels that appear as parameters of the compiled SQL, and samples "
        "the QuerySet accepts.",
        obj=statement,
        id="core.E003",
    )


def statement_errors(statement: PreparedStatement, alias: str | None = None) -> list[checks.Error]:
    """Compile ``statement`` with its sentinels, bind its samples and compare with the ORM's
    SQL for the QuerySet built with the samples; one Error per problem found."""
    alias = alias or statement.alias()
    where = f"prepared statement {statement.name} on database {alias!r}"
    try:
        sql, params = statement.prepared_sql(alias, statement.samples)
    except ColumnOrderError as exc:
        return [
            checks.Error(
                f"{where}: its rows' columns differ from the QuerySet's: {exc}",
                hint="Django's values_list column order changed; adapt core.prepared.",
                obj=statement,
                id="core.E002",
            )
        ]
    except COMPILE_ERRORS as exc:
        return [_cannot_prepare(statement, f"{where} cannot be prepared", exc)]
    try:
        want_sql, want_params = statement.orm_sql(alias, statement.samples)
    except COMPILE_ERRORS as exc:
        return [_cannot_prepare(statement, f"{where}: the ORM cannot compile its samples", exc)]
    if sql != want_sql or _typed(params) != _typed(want_params):
        return [
            checks.Error(
                f"{where} differs from the ORM's compilation.\n"
                f"  prepared: {sql} {params!r}\n  ORM:      {want_sql} {want_params!r}",
                hint="The ORM compiles this QuerySet differently from when it was prepared "
                "(a Django upgrade?): the prepared statement would run wrong SQL or values.",
                obj=statement,
                id="core.E001",
            )
        ]
    return []


def _checked(statement: PreparedStatement) -> list[checks.CheckMessage]:
    """:func:`statement_errors`, with no database connection needed (locking reads too)."""
    try:
        locking = statement.locking
    except COMPILE_ERRORS as exc:
        return [_cannot_prepare(statement, f"prepared statement {statement.name}", exc)]
    if not locking:
        return statement_errors(statement)
    alias = statement.alias()
    with as_in_a_transaction(alias):
        return statement_errors(statement, alias)


def check_prepared_statements(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """The system check: every registered prepared statement compiles as the ORM does."""
    autodiscover_modules("prepared")
    messages: list[checks.CheckMessage] = []
    for statement in registry.values():
        if app_configs is not None and statement.model._meta.app_config not in app_configs:
            continue
        messages.extend(_checked(statement))
    return messages
