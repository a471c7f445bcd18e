"""The test databases: on PostgreSQL each test worker's is a clone of a template migrated once per
migration state (tests/support/template_db.py)."""

from __future__ import annotations

from django.db import connection

from tests.support import template_db


def test_names_stay_within_postgresqls_limit_and_keep_the_hash():
    digest = "ab12cd34ef56" + "0" * 52
    assert template_db.database_name("test_h2r", "_tpl_", digest) == "test_h2r_tpl_ab12cd34ef56"
    long = template_db.database_name("test_" + "x" * 80, "_tplbuild_", digest)
    assert len(long) == 63
    assert long.endswith("_tplbuild_ab12cd34ef56")


def test_the_worker_suffix_is_not_part_of_the_template_name(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert template_db.base_name("test_h2r_gw3") == "test_h2r"
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert template_db.base_name("test_h2r_gw3") == "test_h2r_gw3"


def test_the_hash_covers_the_migrations_and_the_reference_data_code():
    files = {
        p.relative_to(template_db.ROOT).as_posix()
        for p in template_db.migration_files()
        if p.is_relative_to(template_db.ROOT)
    }
    assert "core/migrations/0001_run_lanes.py" in files
    assert "tests/runapp/migrations/0001_initial.py" in files
    assert any(p.parts[-3:-1] == ("auth", "migrations") for p in template_db.migration_files())
    reference = {
        p.relative_to(template_db.ROOT).as_posix() for p in template_db.reference_data_files()
    }
    # the post_migrate receivers' modules and what they import in their bodies
    assert {"core/roles.py", "benchmarks/apps.py", "benchmarks/topics.py"} <= reference


def test_a_changed_migration_makes_another_template(tmp_path, monkeypatch):
    migration = tmp_path / "0001_initial.py"
    migration.write_text("operations = []\n")
    monkeypatch.setattr(template_db, "migration_files", lambda: [migration])
    monkeypatch.setattr(template_db, "reference_data_files", list)
    before = template_db.migration_state_hash()
    assert template_db.migration_state_hash() == before
    migration.write_text("operations = ['changed']\n")
    assert template_db.migration_state_hash() != before


def test_the_test_database_is_a_clone_of_the_current_template(db):
    if connection.vendor != "postgresql":
        # SQLite: Django's own test database, no template
        assert template_db.TEMPLATE_MARK not in str(connection.settings_dict["NAME"])
        return
    name = connection.settings_dict["NAME"]
    template = template_db.database_name(
        template_db.base_name(name), template_db.TEMPLATE_MARK, template_db.migration_state_hash()
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database"
            " WHERE datname IN (%s, %s)",
            [name, template],
        )
        comments = dict(cursor.fetchall())
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [template])
        (connected,) = cursor.fetchone()
    assert comments[name] == template  # cloned from the template of today's migrations
    assert template in comments
    assert connected == 0  # nobody holds the template open (a clone would be refused)
