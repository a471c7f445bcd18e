"""The scratch database and the web server of bench_annotation.py (and of the benchmarks that use
its harness: bench_memory.py, bench_peers_annotation.py): the database on ``PERF_PG_URL``, the
environment of production settings with only the loopback changes, gunicorn or granian started
on a free port; and the item page's weight as a browser fetches it."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "perf" / "out"
DB_NAME = os.environ.get("BENCH_ANNOTATION_DB", "h2r_bench_annotation")
PG_URL = os.environ.get("PERF_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
SERVER_OPTIONS = {"health_checks": False, "server_binding": False}


def db_url(name: str) -> str:
    parts = urlparse(PG_URL)
    return urlunparse(parts._replace(path=f"/{name}"))


def recreate_db() -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def drop_db() -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": db_url(DB_NAME),
            # production settings (DEBUG off, manifest static files, deploy checks) with only
            # the loopback changes; see bench_annotation_settings.py
            "DJANGO_SETTINGS_MODULE": "tests.perf.bench_annotation_settings",
            "DJANGO_ENV": "production",
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-" + "k" * 50,
            "SECURE_SSL_REDIRECT": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "LOG_LEVEL": "ERROR",
            "DB_CONN_MAX_AGE": "600",
            "BENCH_STATIC_ROOT": str(OUT / "static"),
            "BENCH_DB_HEALTH_CHECKS": "1" if SERVER_OPTIONS["health_checks"] else "0",
            "BENCH_DB_SERVER_BINDING": "1" if SERVER_OPTIONS["server_binding"] else "0",
        }
    )
    return env


def spawn_server(cmd: list[str], log: Path) -> subprocess.Popen:
    """The web server ``cmd`` in its own session, on the benchmark's settings, output to ``log``."""
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=server_env(),
        stdout=open(log, "wb"),  # the server writes to it until stopped
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_gunicorn(
    workers: int, log: Path, threads: int = 1, timeout: float = 30
) -> tuple[subprocess.Popen, int]:
    """gunicorn on a free port; ``timeout``: gunicorn's ``--timeout`` (a sync worker busy with
    one request longer than this is killed, a long download included)."""
    worker_class = ["--worker-class", "sync"]
    if threads > 1:  # gthread keeps client connections alive; sync closes each one
        worker_class = ["--worker-class", "gthread", "--threads", str(threads)]
    proc = spawn_server(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi:application",
            "-b",
            "127.0.0.1:0",
            "-w",
            str(workers),
            *worker_class,
            "--backlog",
            "256",
            "--timeout",
            str(int(timeout)),
            "--log-level",
            "info",
        ],
        log,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        m = re.search(r"Listening at: http://127\.0\.0\.1:(\d+)", text)
        booted = len(re.findall(r"Booting worker", text))
        if m and booted >= workers:
            time.sleep(1.0)
            return proc, int(m.group(1))
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited:\n{text}")
        time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


def start_granian(workers: int, log: Path) -> tuple[subprocess.Popen, int]:
    """granian (HTTP in Rust, keep-alive) serving the same WSGI application: one blocking
    thread per worker process, as gunicorn's sync worker runs one request at a time."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = spawn_server(
        [
            str(Path(sys.executable).with_name("granian")),
            *("--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port)),
            *("--workers", str(workers), "--blocking-threads", "1", "--backlog", "256"),
            *("--runtime-threads", "1", "--log-level", "warning", "--no-ws"),
            "config.wsgi:application",
        ],
        log,
    )
    return proc, wait_listening(proc, port, log, "granian", settle_s=2.0)  # every worker up


def wait_listening(
    proc: subprocess.Popen,
    port: int,
    log: Path,
    name: str,
    *,
    timeout_s: float = 60,
    settle_s: float = 1.0,
) -> int:
    """``port`` once the server ``proc`` accepts on it (then ``settle_s`` more); RuntimeError
    with the end of its ``log`` if it exits, or after ``timeout_s``."""
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                time.sleep(settle_s)
                return port
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{name} did not start")


STATIC = [
    "css/app.css",
    "css/annotate.css",
    "js/app.js",
    "js/annotate.js",
    "vendor/htmx/htmx-2.0.11.min.js",
]


def page_weight(port: int, slug: str) -> dict:
    """Fetch one item page as a browser would (gzip) and add the gzip size of its CSS and JS."""
    import http.cookiejar
    import urllib.request

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    base = f"http://127.0.0.1:{port}/study/s/{slug}"
    html = (
        opener.open(f"{base}/?PROLIFIC_PID=weighsession&STUDY_ID=BENCH&SESSION_ID=w1")
        .read()
        .decode()
    )
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    data = f"csrfmiddlewaretoken={token}&consent=agree".encode()
    opener.open(urllib.request.Request(f"{base}/consent/", data=data))
    opener.open(
        urllib.request.Request(f"{base}/codebook/", data=f"csrfmiddlewaretoken={token}".encode())
    )
    req = urllib.request.Request(f"{base}/item/", headers={"Accept-Encoding": "gzip"})
    resp = opener.open(req)
    body = resp.read()
    html_gz = (
        len(body) if resp.headers.get("Content-Encoding") == "gzip" else len(gzip.compress(body, 6))
    )
    html_raw = (
        len(gzip.decompress(body)) if resp.headers.get("Content-Encoding") == "gzip" else len(body)
    )
    assets = {}
    for rel in STATIC:
        raw = (ROOT / "static" / rel).read_bytes()
        assets[rel] = {"raw": len(raw), "gzip": len(gzip.compress(raw, 6))}
    total_gz = html_gz + sum(a["gzip"] for a in assets.values())
    total_raw = html_raw + sum(a["raw"] for a in assets.values())
    return {
        "html_raw": html_raw,
        "html_gzip": html_gz,
        "assets": assets,
        "total_raw": total_raw,
        "total_gzip": total_gz,
    }
