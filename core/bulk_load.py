"""Fresh planner statistics after a bulk load: :func:`analyze_tables` runs ``ANALYZE`` on the
tables of the given models, as one does after filling a table in bulk, so the queries that
follow are planned on the table's real size rather than on an empty or stale estimate. Without
it a table filled in one statement waits for autovacuum (which may be off, or a minute away),
and the item path's queries over a study's items are planned as if the table were empty.

On PostgreSQL only (``ANALYZE`` runs inside the caller's transaction and sees its own rows);
elsewhere (SQLite) it does nothing."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model


def analyze_tables(*models: type[Model], using: str = DEFAULT_DB_ALIAS) -> None:
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")
