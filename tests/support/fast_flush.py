"""A faster end for transactional tests on PostgreSQL: empty only the tables a test wrote to.

Django empties the database after each transactional test (``transaction=True``,
``live_server``, real workers) with one ``TRUNCATE`` of every table. On PostgreSQL a
``TRUNCATE`` gives each table and each of its indexes new files, which costs 1.7–3 s for this
schema's ~50 tables and ~300 relations on this machine, and four test workers truncating at
once wait on each other's file operations. That teardown was the biggest single cost of the
suite.

Installed by ``tests/conftest.py``, :func:`install` makes the PostgreSQL backend's flush SQL
``DELETE`` the rows of the tables that hold any (found in one query) instead. Every foreign key
of the schema is ``DEFERRABLE INITIALLY DEFERRED`` (Django makes them so; the suite checks it),
so the deletes run in any order inside the flush's transaction and the constraints are checked
once at its commit. The end state is the same as Django's once its ``post_migrate`` has run:
every table empty but the content types and permissions (:data:`KEPT`), which that signal would
make again, identical. Sequences are
not reset, as Django's flush does not reset them unless asked (``reset_sequences=True`` keeps
Django's own ``TRUNCATE … RESTART IDENTITY``).

A ``DELETE`` does not stop other connections from writing, as a ``TRUNCATE``'s lock does: a live
server still answering a request the browser sent just before the page closed (a draft's
autosave) may commit a row that points at a row this flush deletes, in a table the flush found
empty or had already emptied. The commit then fails on that foreign key; the flush waits a
moment and runs again over every table, as many times as :data:`ATTEMPTS` allows.
"""

from __future__ import annotations

import time
from typing import Any

_installed = False
original_execute: Any = None  # Django's, kept by install()

#: how many times a flush runs before a concurrent writer's foreign-key failure is raised
ATTEMPTS = 5

# Rows every migrate makes again, identical (post_migrate): kept, so the flush's post_migrate
# finds them instead of making ~50 content types and ~250 permissions again after every test.
# A test that deletes one gets it back from that post_migrate; groups are emptied and remade.
KEPT = frozenset({"django_content_type", "auth_permission"})

DEFER = "SET CONSTRAINTS ALL DEFERRED;"


def nonempty_tables(connection: Any, tables: list[str]) -> list[str]:
    """The ones of ``tables`` that hold at least one row (one query)."""
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT %s WHERE EXISTS (SELECT 1 FROM {quote(t)})" for t in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(probes, list(tables))
        return [row[0] for row in cursor.fetchall()]


def flush_sql(connection: Any, style: Any, tables: list[str]) -> list[str]:
    """``DELETE`` statements for the non-empty ones of ``tables``, constraints deferred (that
    statement alone when all are empty, so the flush still sends ``post_migrate``)."""
    full = nonempty_tables(connection, [t for t in tables if t not in KEPT])
    # never empty: Django's flush sends post_migrate (topics, role groups) only after some SQL
    quote = connection.ops.quote_name
    return [DEFER] + [
        f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(quote(t))};" for t in full
    ]


def install() -> None:
    """Route the PostgreSQL backend's ``sql_flush`` through :func:`flush_sql` (idempotent)."""
    global _installed
    if _installed:
        return
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return flush_sql(self.connection, style, list(tables))

    def execute_sql_flush(self, sql_list):
        from django.core.management.color import no_style
        from django.db import IntegrityError

        for attempt in range(ATTEMPTS):
            try:
                return original_execute(self, sql_list)
            except IntegrityError:
                if not sql_list or sql_list[0] != DEFER or attempt == ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * (attempt + 1))  # let the other connection's request end
                tables = self.connection.introspection.django_table_names(
                    only_existing=True, include_views=False
                )
                sql_list = flush_sql(self.connection, no_style(), tables)

    global original_execute
    original_execute = DatabaseOperations.execute_sql_flush
    DatabaseOperations.sql_flush = sql_flush
    DatabaseOperations.execute_sql_flush = execute_sql_flush
    _installed = True
