"""Test databases cloned from a migrated template on PostgreSQL, migrated once per migration state.

Migrating the schema from scratch takes ~12 s of CPU; four test workers each doing it at once on
two cores took ~30 s each before their first test. Installed by ``tests/conftest.py``,
:func:`install` replaces the PostgreSQL backend's ``create_test_db`` (which pytest-django's
``django_db_setup`` calls) so that, as Django's own parallel runner does with ``_clone_test_db``:

1. under a PostgreSQL advisory lock (one per test database name, so the test workers of one
   session wait for each other), the template ``test_<name>_tpl_<hash>`` is made once by a
   plain migrate, if it does not exist yet: built under another name and renamed when complete,
   so an interrupted build is never used. ``<hash>`` covers every migration file of every
   installed app, the Django version and the code of the ``post_migrate`` receivers (the reference
   data they make: content types, permissions, role groups, topics), so a changed migration
   makes a new template; templates of other hashes are dropped;
2. each test worker's database (``test_<name>_gw0`` …) is ``CREATE DATABASE … TEMPLATE`` that
   template (~0.3 s), its comment naming the template it came from.

The template stays between sessions (the next run clones at once); the workers' databases are
dropped at the end as before. ``--reuse-db`` keeps a worker's database when it came from the
current template and clones it again otherwise; ``--create-db`` builds the template again, once
per session. SQLite runs, ``TEST["MIGRATE"] = False`` and other backends are untouched.
"""

from __future__ import annotations

import dis
import hashlib
import importlib.util
import os
import weakref
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_MARK = "_tpl_"
BUILD_MARK = "_tplbuild_"
PG_NAME_LIMIT = 63  # PostgreSQL cuts longer identifiers

_installed = False
_session = {"token": "", "rebuild": False}


def _project_file(module_name: str) -> Path | None:
    """The source file of ``module_name`` when it is a module of this checkout (else None)."""
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    origin = Path(spec.origin) if spec and spec.origin else None
    if origin and origin.suffix == ".py" and origin.is_relative_to(ROOT):
        return origin
    return None


def migration_files() -> list[Path]:
    """Every migration file of every installed app (in app order, then by name)."""
    from django.apps import apps
    from django.db.migrations.loader import MigrationLoader

    files: list[Path] = []
    for config in apps.get_app_configs():
        module_name, _explicit = MigrationLoader.migrations_module(config.label)
        if not module_name:
            continue
        try:
            spec = importlib.util.find_spec(module_name)
        except ImportError:
            continue
        for folder in (spec.submodule_search_locations or []) if spec else []:
            files.extend(sorted(Path(folder).glob("*.py")))
    return files


def reference_data_files() -> list[Path]:
    """The project's modules whose code ``post_migrate`` runs: each receiver's module and the
    modules it imports inside its body (``ensure_topics`` reads ``benchmarks.topics``)."""
    from django.db.models.signals import post_migrate

    names: set[str] = set()
    for entry in post_migrate.receivers:
        for part in entry:
            receiver = part() if isinstance(part, weakref.ReferenceType) else part
            if not callable(receiver) or not hasattr(receiver, "__code__"):
                continue
            names.add(receiver.__module__)
            names.update(
                ins.argval for ins in dis.get_instructions(receiver) if ins.opname == "IMPORT_NAME"
            )
    return sorted({path for name in names if (path := _project_file(name))})


def migration_state_hash() -> str:
    """A digest of what a fresh migrate leaves in the database."""
    import django

    digest = hashlib.sha256(f"django {django.__version__}\n".encode())
    for path in [*migration_files(), *reference_data_files()]:
        digest.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode())
        digest.update(b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def database_name(base: str, mark: str, digest: str) -> str:
    """``<base><mark><first 12 of digest>``, ``base`` shortened to stay within 63 characters."""
    tail = f"{mark}{digest[:12]}"
    return base[: PG_NAME_LIMIT - len(tail)] + tail


def base_name(test_database_name: str) -> str:
    """The test database's name without the test worker's suffix (``_gw0`` …)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return test_database_name.removesuffix(f"_{worker}") if worker else test_database_name


def lock_key(base: str) -> int:
    """The advisory lock (a signed 64-bit number) of the templates of ``base``."""
    raw = hashlib.sha256(f"how2review test template {base}".encode()).digest()[:8]
    return int.from_bytes(raw, "big", signed=True)


def _databases(cursor: Any, base: str, target: str) -> dict[str, str]:
    """Name → comment of the templates (built or half-built) of ``base`` and of ``target``."""
    cursor.execute(
        "SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '') FROM pg_database"
        " WHERE starts_with(datname, %s) OR starts_with(datname, %s) OR datname = %s",
        [base + TEMPLATE_MARK, base + BUILD_MARK, target],
    )
    return dict(cursor.fetchall())


def _set_name(connection: Any, name: str) -> None:
    from django.conf import settings

    connection.close()
    settings.DATABASES[connection.alias]["NAME"] = name
    connection.settings_dict["NAME"] = name


def _build(creation: Any, migrate_fresh: Any, *, build: str, verbosity: int) -> None:
    """A fresh migrate into ``build`` (Django's own create_test_db under that name)."""
    connection = creation.connection
    test = connection.settings_dict["TEST"]
    original_name, original_test_name = connection.settings_dict["NAME"], test.get("NAME")
    test["NAME"] = build
    try:
        migrate_fresh(
            creation, verbosity=verbosity, autoclobber=True, serialize=False, keepdb=False
        )
    finally:
        test["NAME"] = original_test_name
        _set_name(connection, original_name)


def clone_from_template(
    creation: Any, migrate_fresh: Any, *, verbosity: int, serialize: bool, keepdb: bool
) -> str:
    connection = creation.connection
    quote = connection.ops.quote_name
    target = creation._get_test_db_name()
    base = base_name(target)
    digest = migration_state_hash()
    template = database_name(base, TEMPLATE_MARK, digest)
    build = database_name(base, BUILD_MARK, digest)
    with creation._nodb_cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [lock_key(base)])
        try:
            existing = _databases(cursor, base, target)
            rebuild = _session["rebuild"] and existing.get(template) != _session["token"]
            for name in existing:
                if name != target and (name != template or rebuild):
                    # another migration state's template, a half-built one, or --create-db
                    cursor.execute(f"DROP DATABASE IF EXISTS {quote(name)} WITH (FORCE)")
            if template not in existing or rebuild:
                if verbosity >= 1:
                    creation.log(f"Migrating the template test database {template!r}...")
                _build(creation, migrate_fresh, build=build, verbosity=verbosity)
                cursor.execute(f"ALTER DATABASE {quote(build)} RENAME TO {quote(template)}")
                cursor.execute(f"COMMENT ON DATABASE {quote(template)} IS %s", [_session["token"]])
            if keepdb and existing.get(target) == template:
                action = "Using existing"
            else:
                action = "Cloning"
                cursor.execute(f"DROP DATABASE IF EXISTS {quote(target)} WITH (FORCE)")
                cursor.execute(f"CREATE DATABASE {quote(target)} TEMPLATE {quote(template)}")
                cursor.execute(f"COMMENT ON DATABASE {quote(target)} IS %s", [template])
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [lock_key(base)])
    if verbosity >= 1:
        creation.log(
            f"{action} test database for alias {connection.alias!r} ({target!r}) "
            f"from the template {template!r}..."
        )
    _set_name(connection, target)
    if serialize:
        connection._test_serialized_contents = creation.serialize_db_to_string()
    connection.ensure_connection()
    return target


def install(*, session_token: str, rebuild: bool) -> None:
    """Make the PostgreSQL backend's test databases clones of a migrated template (idempotent).
    ``session_token`` is the same in every test worker of one session (``--create-db`` then
    builds the template once, not once per worker); ``rebuild``: ``--create-db`` was given."""
    global _installed
    _session.update(token=session_token, rebuild=rebuild)
    if _installed:
        return
    from django.db.backends.postgresql.creation import DatabaseCreation

    migrate_fresh = DatabaseCreation.create_test_db

    def create_test_db(self, verbosity=1, autoclobber=False, serialize=True, keepdb=False):
        if self.connection.settings_dict["TEST"].get("MIGRATE") is False:
            return migrate_fresh(self, verbosity, autoclobber, serialize, keepdb)
        return clone_from_template(
            self, migrate_fresh, verbosity=verbosity, serialize=serialize, keepdb=keepdb
        )

    def _destroy_test_db(self, test_database_name, verbosity):
        # a worker process or server a test started may still be closing its connections
        with self._nodb_cursor() as cursor:
            cursor.execute(f"DROP DATABASE {self._quote_name(test_database_name)} WITH (FORCE)")

    DatabaseCreation.create_test_db = create_test_db
    DatabaseCreation._destroy_test_db = _destroy_test_db
    _installed = True
