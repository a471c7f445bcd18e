"""Settings for the gunicorn server of bench_annotation.py: production settings (DJANGO_ENV=
production, DEBUG off, manifest static files, every check --deploy protection) with only what
plain-HTTP loopback needs changed, plus the database knobs the benchmark compares.

- Loopback has no TLS terminator in front, so the secure-only cookie flags are off (the app's
  own participant cookie already follows ``request.is_secure()``).
- ``BENCH_DB_HEALTH_CHECKS`` (default 0): Django's per-request ``SELECT 1`` on a reused
  connection (CONN_HEALTH_CHECKS). A round trip per request; useless behind a pooler or on a
  local database, where a broken connection fails the request and is replaced on the next.
- ``BENCH_DB_SERVER_BINDING`` (default 0): psycopg server-side parameter binding, which lets
  psycopg prepare statements it sees repeatedly.
- ``/bench/floor/`` (bench_annotation_urls.py): a bare view (no database, no template) under the full middleware stack, to
  measure the per-request floor of Django + gunicorn under the same harness.
"""

from __future__ import annotations

import os

from config.env import env_bool
from config.settings import *  # noqa: F403 - a settings module extending the project's
from config.settings import DATABASES, STATIC_ROOT

CSRF_COOKIE_SECURE = False
SESSION_COOKIE_SECURE = False
STATIC_ROOT = os.environ.get("BENCH_STATIC_ROOT", str(STATIC_ROOT))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env_bool("BENCH_DB_HEALTH_CHECKS", False)
if env_bool("BENCH_DB_SERVER_BINDING", False):
    DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = True

ROOT_URLCONF = "tests.perf.bench_annotation_urls"
