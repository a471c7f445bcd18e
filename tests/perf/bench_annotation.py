"""Load benchmark of the annotator flow: 50 simulated Prolific annotators in a closed loop
(item page, then save) against gunicorn (several sync workers) on PostgreSQL, loopback only.

Creates and drops a scratch database ``h2r_bench_annotation`` on ``PERF_PG_URL`` (default
``postgres://postgres@127.0.0.1:5432/postgres``), seeds a study (``--items`` items, k = 3, no
minimum time), starts gunicorn on a free port, runs Locust headless for ``--seconds`` and prints
p50/p95/p99 of the item page and of save, items/s, server CPU per item and the item page's weight
(HTML + CSS + JS, gzip). Figures also go to ``tests/perf/out/annotation.json``.

Run: ``.venv/bin/python tests/perf/bench_annotation.py [--users 50 --seconds 30 --workers 4]``
Targets (2-core machine): p95 < 150 ms for both, >= 100 items/s, < 10 ms server CPU per item,
item page < 100 kB compressed in all.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "perf" / "out"
DB_NAME = "h2r_bench_annotation"
PG_URL = os.environ.get("PERF_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
N_STEPS = 6
STATIC = [
    "css/app.css",
    "css/annotate.css",
    "js/app.js",
    "js/annotate.js",
    "vendor/htmx/htmx-2.0.11.min.js",
]


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
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "0",
            "DJANGO_ENV": "development",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "LOG_LEVEL": "ERROR",
            "DB_CONN_MAX_AGE": "600",
        }
    )
    return env


def seed(n_items: int) -> str:
    """Migrate and create the study; returns its slug."""
    env = server_env()
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    os.environ.update(env)
    import django

    django.setup()
    from annotation import services
    from benchmarks.models import Dataset, Generation, Generator, Procedure

    ds = Dataset.objects.create(name="bench-annotation", version="v1")
    gen = Generator.objects.create(name="bench-model")
    words = (
        "Measure the ingredients carefully and combine them in a clean bowl before heating gently"
    )
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"b-{i}",
                goal=f"Goal {i}: prepare a simple dish at home with basic tools.",
                resources=["bowl", "pan", "spoon", "stove"],
                steps=[f"{words} (reference step {s})." for s in range(1, N_STEPS + 1)],
            )
            for i in range(n_items)
        ]
    )
    gens = Generation.objects.bulk_create(
        [
            Generation(
                procedure=p,
                generator=gen,
                predicted_steps=[f"{words} (generated step {s})." for s in range(1, N_STEPS + 1)],
            )
            for p in procs
        ]
    )
    study = services.study_create(
        name="Load benchmark",
        generation_ids=[g.pk for g in gens],
        overlap=3,
        items_per_participant=100_000,
        min_seconds_per_item=0,
        attention_rate=0,
        prolific_study_id="BENCH",
    )
    from django.db import connection, connections

    with (
        connection.cursor() as cursor
    ):  # fresh statistics, as autovacuum would have after a bulk load
        cursor.execute("ANALYZE")
    connections.close_all()
    return study.slug


def start_gunicorn(workers: int, log: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi:application",
            "-b",
            "127.0.0.1:0",
            "-w",
            str(workers),
            "--worker-class",
            "sync",
            "--backlog",
            "256",
            "--log-level",
            "info",
        ],
        cwd=ROOT,
        env=server_env(),
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
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


def process_cpu(pid: int) -> float:
    import psutil

    root = psutil.Process(pid)
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def postgres_cpu() -> float:
    import psutil

    total = 0.0
    for p in psutil.process_iter(["name"]):
        if (p.info.get("name") or "").startswith("postgres"):
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
    return total


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


def run_locust(port: int, slug: str, users: int, seconds: int) -> dict:
    prefix = OUT / "annotation"
    env = dict(os.environ, BENCH_STUDY_SLUG=slug, BENCH_N_STEPS=str(N_STEPS))
    cmd = [
        str(Path(sys.executable).with_name("locust")),
        "-f",
        str(ROOT / "tests/perf/locustfile_annotation.py"),
        "--headless",
        "-u",
        str(users),
        "-r",
        str(users),
        "-t",
        f"{seconds}s",
        "--host",
        f"http://127.0.0.1:{port}",
        "--csv",
        str(prefix),
        "--only-summary",
        "--loglevel",
        "WARNING",
        "--stop-timeout",
        "5",
    ]
    subprocess.run(
        cmd,
        cwd=ROOT,
        env=env,
        check=False,
        timeout=seconds + 120,
        stdout=subprocess.DEVNULL,
        stderr=open(OUT / "annotation-locust.log", "wb"),
    )
    stats = {}
    with open(f"{prefix}_stats.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            stats[row["Name"]] = row
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--items", type=int, default=4000)
    ap.add_argument("--keep-db", action="store_true")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)

    recreate_db()
    proc = None
    try:
        slug = seed(args.items)
        proc, port = start_gunicorn(args.workers, OUT / "annotation-gunicorn.log")
        weight = page_weight(port, slug)
        cpu0, pg0, t0 = process_cpu(proc.pid), postgres_cpu(), time.monotonic()
        stats = run_locust(port, slug, args.users, args.seconds)
        cpu1, pg1, elapsed = process_cpu(proc.pid), postgres_cpu(), time.monotonic() - t0
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        if not args.keep_db:
            drop_db()

    item, save = stats["item page"], stats["save (submit)"]
    saves_ok = int(save["Request Count"]) - int(save["Failure Count"])
    items_per_s = float(save["Requests/s"])
    result = {
        "users": args.users,
        "seconds": args.seconds,
        "workers": args.workers,
        "item_page_ms": {k: float(item[k]) for k in ("50%", "95%", "99%")},
        "save_ms": {k: float(save[k]) for k in ("50%", "95%", "99%")},
        "item_requests": int(item["Request Count"]),
        "item_failures": int(item["Failure Count"]),
        "saves": saves_ok,
        "save_failures": int(save["Failure Count"]),
        "items_per_s": round(items_per_s, 1),
        "gunicorn_cpu_ms_per_item": round(1000 * (cpu1 - cpu0) / max(saves_ok, 1), 2),
        "postgres_cpu_ms_per_item_all_processes": round(1000 * (pg1 - pg0) / max(saves_ok, 1), 2),
        "wall_s": round(elapsed, 1),
        "page_weight": weight,
    }
    (OUT / "annotation.json").write_text(json.dumps(result, indent=2))
    print(
        f"annotation load: {args.users} users, {args.seconds} s, gunicorn x{args.workers} sync workers, PostgreSQL"
    )
    print(
        f"  item page  p50 {result['item_page_ms']['50%']:.0f} ms  p95 {result['item_page_ms']['95%']:.0f} ms  "
        f"p99 {result['item_page_ms']['99%']:.0f} ms  ({result['item_requests']} requests, {result['item_failures']} failed)"
    )
    print(
        f"  save       p50 {result['save_ms']['50%']:.0f} ms  p95 {result['save_ms']['95%']:.0f} ms  "
        f"p99 {result['save_ms']['99%']:.0f} ms  ({saves_ok} saved, {result['save_failures']} failed)"
    )
    print(f"  throughput {result['items_per_s']} items/s")
    print(
        f"  server CPU {result['gunicorn_cpu_ms_per_item']} ms/item (gunicorn); "
        f"PostgreSQL {result['postgres_cpu_ms_per_item_all_processes']} ms/item (all postgres processes on a shared machine)"
    )
    print(
        f"  item page  {weight['total_gzip'] / 1024:.1f} kB gzip in all (HTML {weight['html_gzip'] / 1024:.1f} kB; "
        f"{weight['total_raw'] / 1024:.1f} kB uncompressed)"
    )


if __name__ == "__main__":
    main()
