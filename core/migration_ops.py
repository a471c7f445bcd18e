"""Operations the project's migrations share."""

from __future__ import annotations

from django.db import migrations


def drop_fk_index(
    alter_field: migrations.AlterField, index: str, table: str, column: str
) -> migrations.SeparateDatabaseAndState:
    """``alter_field`` (a foreign key becoming ``db_index=False``) in the models' state, and in
    the database only its own index ``index`` dropped (recreated on the way back).

    Django's own AlterField drops every non-unique-constraint index on the column, which takes
    a partial unique index declared as a ``UniqueConstraint(condition=…)`` with it (seen:
    ``assignment_one_active_per_participant``); naming the one index avoids that."""
    return migrations.SeparateDatabaseAndState(
        state_operations=[alter_field],
        database_operations=[
            migrations.RunSQL(
                f'DROP INDEX IF EXISTS "{index}"',
                reverse_sql=f'CREATE INDEX "{index}" ON "{table}" ("{column}")',
            )
        ],
    )
