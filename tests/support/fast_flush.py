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
"""

from __future__ import annotations

from typing import Any

_installed = False

# Rows every migrate makes again, identical (post_migrate): kept, so the flush's post_migrate
# finds them instead of making ~50 content types and ~250 permissions again after every test.
# A test that deletes one gets it back from that post_migrate; groups are emptied and remade.
KEPT = frozenset({"django_content_type", "auth_permission"})


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
    return ["SET CONSTRAINTS ALL DEFERRED;"] + [
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

    DatabaseOperations.sql_flush = sql_flush
    _installed = True
