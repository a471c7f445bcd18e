"""No table of the project carries an index another index already serves: a
foreign key's own index beside a constraint or index that leads with the same column is one
more index to write on every insert and every update that cannot stay on its page (a claim,
a save, a judge run's reply), for no read it speeds up. And every constraint and index the
models declare is in the database: dropping a foreign key's own index with Django's AlterField
had also dropped a partial unique index on the same column (core.migration_ops). The suite runs
on PostgreSQL."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection

# each plain btree index of a table, with its columns and operator classes in order
_INDEXES = """
select c.relname, i.indisunique, string_to_array(i.indkey::text, ' ')::int[],
       string_to_array(i.indclass::text, ' ')::oid[]
from pg_index i
join pg_class c on c.oid = i.indexrelid
join pg_am am on am.oid = c.relam
where i.indrelid = %s::regclass and am.amname = 'btree'
  and i.indpred is null and i.indexprs is null
"""


def _project_models():
    for label in ("annotation", "benchmarks", "judging", "mining", "core"):
        yield from apps.get_app_config(label).get_models(include_auto_created=False)


def _redundant(indexes: list[tuple]) -> list[str]:
    """Names of the non-unique indexes whose columns (and operator classes) lead another index;
    of two equal non-unique ones, the second by name."""
    found = []
    for name, unique, cols, classes in indexes:
        if unique:
            continue
        n = len(cols)
        for other, other_unique, other_cols, other_classes in indexes:
            if other == name or other_cols[:n] != cols or other_classes[:n] != classes:
                continue
            if len(other_cols) > n or other_unique or name > other:
                found.append(f"{name} (served by {other})")
                break
    return found


def test_redundant_finds_a_prefix_and_a_twin_but_not_a_unique_or_another_opclass():
    idx = [
        ("fk_a", False, [2], [10]),
        ("a_b", False, [2, 3], [10, 10]),
        ("twin_1", False, [4], [10]),
        ("twin_2", False, [4], [10]),
        ("uniq_a", True, [2], [10]),
        ("like_b", False, [3], [11]),
        ("b", False, [3], [10]),
    ]
    assert _redundant(idx) == ["fk_a (served by a_b)", "twin_2 (served by twin_1)"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="reads PostgreSQL's catalog")
@pytest.mark.django_db
def test_no_project_table_has_an_index_another_already_serves():
    found = {}
    for model in _project_models():
        table = model._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(_INDEXES, [table])
            redundant = _redundant(cursor.fetchall())
        if redundant:
            found[table] = redundant
    assert found == {}, f"set db_index=False on the foreign key, or drop the index: {found}"


@pytest.mark.django_db
def test_every_constraint_and_index_the_models_declare_is_in_the_database():
    missing = []
    for model in _project_models():
        with connection.cursor() as cursor:
            there = connection.introspection.get_constraints(cursor, model._meta.db_table)
        for declared in (*model._meta.constraints, *model._meta.indexes):
            if declared.name not in there:
                missing.append(f"{model._meta.db_table}.{declared.name}")
    assert missing == []
