"""Settings come from the environment; production mode passes ``check --deploy``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    drop = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ENV", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    base = {k: v for k, v in os.environ.items() if k not in drop}
    base.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "DJANGO_ENV": "production",
    "SECRET_KEY": "x" * 20 + "-a-long-random-production-secret-key-0123456789",
    "ALLOWED_HOSTS": "how2review.example.org",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/how2review",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
}


def test_production_mode_passes_check_deploy():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_development_mode_fails_check_deploy():
    """The check is real: the development defaults are flagged."""
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING", env={"DJANGO_ENV": "development"}
    )
    assert result.returncode != 0
    assert "security.W" in result.stderr + result.stdout


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS"])
def test_production_refuses_to_start_without_required_secret(missing):
    env = {k: v for k, v in PRODUCTION.items() if k != missing}
    env[missing] = ""
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert missing in result.stderr


def test_bad_boolean_is_named():
    result = run_manage("check", env={"DEBUG": "maybe"})
    assert result.returncode != 0
    assert "DEBUG='maybe'" in result.stderr


def test_settings_read_database_and_broker_from_environment():
    code = (
        "from django.conf import settings as s;"
        "d=s.DATABASES['default'];"
        "print(d['ENGINE'], d['NAME'], d['HOST'], d['PORT'], s.CELERY_BROKER_URL)"
    )
    result = run_manage(
        "shell",
        "-c",
        code,
        env={
            "DATABASE_URL": "postgres://u:p@db.internal:6543/h2r",
            "CELERY_BROKER_URL": "redis://cache:6379/3",
        },
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-5:] == [
        "django.db.backends.postgresql",
        "h2r",
        "db.internal",
        "6543",
        "redis://cache:6379/3",
    ]


def test_embedded_default_is_sqlite_and_filesystem_broker(tmp_path):
    env = {"HOW2REVIEW_VAR_DIR": str(tmp_path)}
    code = "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL)"
    base_env = {
        k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}
    }
    base_env.update(env)
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=base_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-2:] == ["django.db.backends.sqlite3", "filesystem://"]


def test_tests_run_on_the_configured_database(settings):
    """make test points the suite at PostgreSQL; this guards against silently testing SQLite."""
    url = os.environ.get("DATABASE_URL", "")
    engine = settings.DATABASES["default"]["ENGINE"]
    if url.startswith("postgres"):
        assert engine == "django.db.backends.postgresql"
    else:
        assert engine == "django.db.backends.sqlite3"
    if os.environ.get("HOW2REVIEW_REQUIRE_POSTGRES") == "1":
        assert engine == "django.db.backends.postgresql"


def test_the_suite_refuses_to_run_off_postgresql_when_required(tmp_path):
    """The guard of tests/conftest.py: with HOW2REVIEW_REQUIRE_POSTGRES=1 and no PostgreSQL
    DATABASE_URL, pytest stops before running any test, naming the engine."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(HOW2REVIEW_REQUIRE_POSTGRES="1", HOW2REVIEW_VAR_DIR=str(tmp_path))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/core/test_roles.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 3, result.stdout + result.stderr
    assert "database engine is django.db.backends.sqlite3" in result.stdout + result.stderr


def test_cache_url_selects_redis_and_bad_scheme_is_named():
    code = "from django.conf import settings as s; print(s.CACHES['default']['BACKEND'])"
    ok = run_manage("shell", "-c", code, env={"CACHE_URL": "redis://127.0.0.1:6379/1"})
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split()[-1] == "django.core.cache.backends.redis.RedisCache"
    bad = run_manage("check", env={"CACHE_URL": "memcached://x"})
    assert bad.returncode != 0 and "CACHE_URL='memcached://x'" in bad.stderr


def test_pgbouncer_transaction_pooling_turns_server_side_state_off():
    """DB_PGBOUNCER_TRANSACTION=1: no server-side cursors, no server-side prepared statements;
    a query still runs on PostgreSQL with both off."""
    code = (
        "from django.db import connection;"
        "s = connection.settings_dict;"
        "c = connection.cursor(); c.execute('SELECT 1');"
        "print(s['DISABLE_SERVER_SIDE_CURSORS'], connection.connection.prepare_threshold)"
    )
    # the maintenance database, which every PostgreSQL server has (the test one is not made yet)
    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x")
    base = {"DATABASE_URL": url.rsplit("/", 1)[0] + "/postgres"}
    on = run_manage("shell", "-c", code, env={**base, "DB_PGBOUNCER_TRANSACTION": "1"})
    assert on.returncode == 0, on.stderr
    assert on.stdout.splitlines()[-1].split() == ["True", "None"]
    off = run_manage("shell", "-c", code, env={**base, "DB_PGBOUNCER_TRANSACTION": "0"})
    assert off.returncode == 0, off.stderr
    assert off.stdout.splitlines()[-1].split()[0] == "False"
