"""Moving the test database along the migration graph, for the data-migration tests: migrate to
some nodes, read the models as they were there, and go back to the leaves afterwards."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def leaf_nodes(app: str | None = None) -> list[tuple[str, str]]:
    """The graph's leaves (of one app, if named)."""
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    return [key for key in leaves if app is None or key[0] == app]


def migrate_to(targets: list[tuple[str, str]], *, state_with: Iterable[tuple[str, str]] = ()):
    """Migrate the database to ``targets`` and return the historical apps there (``state_with``:
    more nodes whose state the models are read with, e.g. another app's leaves)."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([*targets, *state_with]).apps


@pytest.fixture
def back_to_the_leaf():
    """Use with ``pytest.mark.usefixtures``: the database is migrated back to the leaves after
    the test, so the tests after it see today's schema."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
