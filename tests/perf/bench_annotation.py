"""Load benchmark of the annotator flow: 50 simulated Prolific annotators in a closed loop
(item page, then save) against gunicorn (3 sync workers by default, for 2 cores) on
PostgreSQL, loopback only, with production settings (see bench_annotation_settings.py).

Runs on the benchmarks' own PostgreSQL cluster (tests/perf/_pg_cluster.py: initdb in a
temporary folder, PostgreSQL's default settings, autovacuum on, as in production), removed at the
end; ``--machine-db`` runs on ``PERF_PG_URL`` instead (default
``postgres://postgres@127.0.0.1:5432/postgres``), for comparison. Creates a scratch database
``h2r_bench_annotation`` (``BENCH_ANNOTATION_DB`` names another), seeds a
study (``--items`` items with 4 KB of source text each, k = 3, no minimum time;
tests/perf/_annotation_study.py), starts gunicorn on a free port (tests/perf/_annotation_server.py),
runs Locust headless for ``--seconds`` and prints p50/p95/p99 of the item page and of save,
items/s, CPU per item of gunicorn, of PostgreSQL and of Locust itself, the load average, and the
item page's weight (HTML + CSS + JS, gzip). Figures also go to ``tests/perf/out/annotation.json``.

Run: ``.venv/bin/python tests/perf/bench_annotation.py [--users 50 --seconds 30 --workers 3]``

- ``--rate R`` paces each annotator at R items/s (still a closed loop; users started together
  stay in step);
- ``--pace MIN,MAX`` pauses each annotator a random MIN to MAX seconds after each item (a
  person's pace; bench_crowd.py runs 500 of them), ``--spawn-rate R`` starts R users a second;
- ``--think S`` pauses each annotator a random 0-2S seconds after each item (mean S: users out
  of step, as people are);
- ``--floor`` measures a bare view under the same harness instead;
- ``--with-floor S`` adds S seconds of that bare view on the same server right after the item
  path and prints the item's server CPU as a multiple of the floor of its two requests, both
  from one run (the machine's speed drifts between runs);
- ``--threads N`` uses gthread workers (keep-alive);
- ``--server granian`` serves the same application with granian (measured, not the
  deployment's).

The study is a lab study: ``--per-address`` new participants per network address (default
users + 1: every simulated annotator comes from 127.0.0.1). After the run the server's rows are
counted (tests/perf/_honest.py): the participants added must equal ``--users`` and the
annotations added the saves the simulated users counted (plus at most the saves sent but cut
off unanswered by the stop, which the server may have stored), and no request (setup included)
may have failed; otherwise it prints ``honest: FAIL …`` and exits 1.

The database's CPU per item is also measured over time (tests/perf/_db_cost.py): the run is cut
into five equal spans and the CPU of the database's processes (the whole cluster; with
``--machine-db`` every postgres process on the machine) per annotation stored in each is
printed; when the last fifth costs more than 15% above the first, the database's cost grows
with the study's tables and the script prints ``flat: FAIL …`` and exits 1.

Targets (2-core machine): p95 < 150 ms for both, >= 100 items/s, < 10 ms server CPU per item,
item page < 100 kB compressed in all. With no pause, a closed loop of N users obeys Little's law
(N = throughput x cycle time), so p95 < 150 ms for both requests at 50 users needs > 167 items/s.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.perf import _annotation_server as srv  # noqa: E402
from tests.perf import _locust_saves  # noqa: E402
from tests.perf._annotation_server import (  # noqa: E402
    OUT,
    SERVER_OPTIONS,
    drop_db,
    page_weight,
    recreate_db,
    start_granian,
    start_gunicorn,
)
from tests.perf._annotation_study import N_STEPS, seed, stored_counts  # noqa: E402
from tests.perf._cpu import (  # noqa: E402
    backend_cpu,
    backend_cpu_spent,
    postgres_cpu,
    process_cpu,
)
from tests.perf._db_cost import CostSampler, fifths, slope_verdict  # noqa: E402
from tests.perf._honest import Ledger, locust_refusals  # noqa: E402
from tests.perf._pg_cluster import pg_cluster  # noqa: E402


def run_locust(
    port: int,
    slug: str,
    users: int,
    seconds: int,
    *,
    rate: float = 0.0,
    think: float = 0.0,
    mode: str = "annotate",
    plain: bool = False,
    pace: str = "",
    spawn_rate: float = 0,
) -> tuple[dict, float]:
    """Locust's stats by request name, and the CPU seconds Locust itself used."""
    import resource

    prefix = OUT / "annotation"
    env = dict(
        os.environ,
        BENCH_STUDY_SLUG=slug,
        BENCH_N_STEPS=str(N_STEPS),
        BENCH_RATE_PER_USER=str(rate),
        BENCH_THINK_S=str(think),
        BENCH_PACE=pace,
        BENCH_MODE=mode,
        BENCH_PLAIN="1" if plain else "0",
        BENCH_SAVES_FILE=str(OUT / "annotation-saves.json"),
    )
    cmd = [
        str(Path(sys.executable).with_name("locust")),
        *("-f", str(ROOT / "tests/perf/locustfile_annotation.py"), "--headless"),
        *("-u", str(users), "-r", f"{spawn_rate or users:g}", "-t", f"{seconds}s"),
        *("--host", f"http://127.0.0.1:{port}", "--csv", str(prefix), "--only-summary"),
        # every started item finishes and is counted (the server stores it)
        *("--loglevel", "WARNING", "--stop-timeout", "60"),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        cmd,
        cwd=ROOT,
        env=env,
        check=False,
        timeout=seconds + 120,
        stdout=subprocess.DEVNULL,
        stderr=open(OUT / "annotation-locust.log", "wb"),  # noqa: SIM115 - closed with the process
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    locust_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = {}
    with open(f"{prefix}_stats.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            stats[row["Name"]] = row
    return stats, locust_cpu


def _floor_segment(pid: int, port: int, slug: str, users: int, seconds: int) -> dict:
    """``seconds`` of the bare view on the running server, right after the item path: the
    server's CPU a request and the failed requests of that run."""
    cpu0 = process_cpu(pid)
    stats, _ = run_locust(port, slug, users, seconds, mode="floor")
    n = int(stats["floor"]["Request Count"]) - int(stats["floor"]["Failure Count"])
    failed, lines = locust_refusals(OUT / "annotation")
    return {
        "requests": n,
        "cpu_ms_per_request": round(1000 * (process_cpu(pid) - cpu0) / max(n, 1), 3),
        "failed": failed,
        "failure_lines": lines,
    }


def percentiles(ms: dict) -> str:
    """``p50 … ms  p95 … ms  p99 … ms`` of Locust's percentiles (``{"50%": …}``)."""
    return f"p50 {ms['50%']:.0f} ms  p95 {ms['95%']:.0f} ms  p99 {ms['99%']:.0f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="> 1: gthread workers (keep-alive) with this many threads",
    )
    ap.add_argument("--server", choices=("gunicorn", "granian"), default="gunicorn")
    ap.add_argument("--items", type=int, default=4000)
    ap.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="items/s per simulated annotator (Locust constant_throughput); 0 = no pause at all",
    )
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        metavar="S",
        help="a random pause of 0-2S seconds after each item (mean S), users out of step",
    )
    ap.add_argument(
        "--pace",
        default="",
        metavar="MIN,MAX",
        help="a random pause of MIN to MAX seconds after each item (a person's pace, users out "
        "of step; e.g. 5,15)",
    )
    ap.add_argument(
        "--spawn-rate",
        type=float,
        default=0,
        help="users started per second (default: all at once)",
    )
    ap.add_argument(
        "--floor",
        action="store_true",
        help="hit a bare view (no query, no template) instead: the per-request floor of the stack",
    )
    ap.add_argument(
        "--with-floor",
        type=int,
        default=0,
        metavar="S",
        help="then S seconds of the bare view on the same server: the item path's server CPU as "
        "a multiple of the floor of its two requests, both measured in this one run",
    )
    ap.add_argument(
        "--plain",
        action="store_true",
        help="as a browser without the item page's script: the save redirects, then the item page "
        "(default: as the script, the save answered with the next item in one request)",
    )
    ap.add_argument("--health-checks", action="store_true", help="CONN_HEALTH_CHECKS on")
    ap.add_argument("--server-binding", action="store_true", help="psycopg server-side binding")
    ap.add_argument("--keep-db", action="store_true", help="with --machine-db: keep its database")
    ap.add_argument(
        "--machine-db",
        action="store_true",
        help="run on the PostgreSQL at PERF_PG_URL (its settings as they are) instead of the "
        "benchmarks' own cluster with default settings",
    )
    ap.add_argument(
        "--per-address",
        type=int,
        default=None,
        help="the study's new participants per network address (default: users + 1, a lab "
        "study: every simulated annotator and the page-weight session come from 127.0.0.1)",
    )
    args = ap.parse_args(argv)
    if args.pace and len([x for x in args.pace.split(",") if x]) != 2:
        ap.error(f"--pace {args.pace}: give MIN,MAX seconds, e.g. 5,15")
    if args.machine_db:
        return run(args, postgres_cpu, "the machine's PostgreSQL (PERF_PG_URL), every process")
    with pg_cluster() as cluster:
        srv.PG_URL = cluster.admin_url
        auto = cluster.settings("autovacuum")["autovacuum"]
        return run(args, cluster.cpu, f"own cluster (default settings, autovacuum {auto})")


def run(args: argparse.Namespace, db_cpu, db_where: str) -> int:
    """The benchmark on the database at ``srv.PG_URL``; ``db_cpu()``: its CPU seconds so far."""
    per_address = args.users + 1 if args.per_address is None else args.per_address
    OUT.mkdir(parents=True, exist_ok=True)
    SERVER_OPTIONS.update(health_checks=args.health_checks, server_binding=args.server_binding)
    mode = "floor" if args.floor else "annotate"

    load_before = os.getloadavg()[0]
    recreate_db()
    proc = None
    try:
        slug = seed(args.items, per_address)
        if args.server == "granian":
            proc, port = start_granian(args.workers, OUT / "annotation-granian.log")
        else:
            proc, port = start_gunicorn(args.workers, OUT / "annotation-gunicorn.log", args.threads)
        weight = page_weight(port, slug)
        stored0 = stored_counts(slug)
        cpu0, pg0, t0 = process_cpu(proc.pid), db_cpu(), time.monotonic()
        own0 = backend_cpu(srv.PG_URL, srv.DB_NAME)
        with CostSampler(db_cpu, srv.db_url(srv.DB_NAME), "annotation_annotation") as sampler:
            stats, locust_cpu = run_locust(
                port,
                slug,
                args.users,
                args.seconds,
                rate=args.rate,
                think=args.think,
                mode=mode,
                plain=args.plain,
                pace=args.pace,
                spawn_rate=args.spawn_rate,
            )
        cpu1, pg1, elapsed = process_cpu(proc.pid), db_cpu(), time.monotonic() - t0
        own = backend_cpu_spent(own0, backend_cpu(srv.PG_URL, srv.DB_NAME))
        stored1 = stored_counts(slug)
        # before the floor's run writes its own: the failed requests, and the saves answered 302
        # as the simulated users themselves counted them (tests/perf/_locust_saves.py)
        failed, failure_lines = locust_refusals(OUT / "annotation")
        saves_ok, cut = _locust_saves.read(OUT / "annotation-saves.json", users=args.users)
        floor_run = None
        if args.with_floor and not args.floor:
            floor_run = _floor_segment(proc.pid, port, slug, args.users, args.with_floor)
        from django.db import connections

        connections.close_all()  # before the scratch database is dropped
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        if not args.keep_db:
            drop_db()
    load_after = os.getloadavg()[0]
    server = (
        f"granian x{args.workers} WSGI workers"
        if args.server == "granian"
        else f"gunicorn x{args.workers} gthread workers x{args.threads} threads"
        if args.threads > 1
        else f"gunicorn x{args.workers} sync workers"
    )
    settings_note = (
        f"production settings, health checks {'on' if args.health_checks else 'off'}, "
        f"server-side binding {'on' if args.server_binding else 'off'}"
    )
    pace = (
        f"a random pause of {args.pace.replace(',', '-')} s after each item"
        if args.pace
        else f"a random pause of 0-{2 * args.think:g} s after each item"
        if args.think
        else f"{args.rate} items/s per user"
        if args.rate
        else "no pause"
    )
    path = "plain: save, redirect, item page" if args.plain else "in place: save answers next item"
    pace += f"; {path}"
    ledger = Ledger(f"annotation, {args.users} users, {per_address} new participants per address")
    ledger.refused(failed, "; ".join(failure_lines) or "Locust counted failed requests")
    if floor_run is not None:
        ledger.refused(
            floor_run["failed"],
            "floor: " + ("; ".join(floor_run["failure_lines"]) or "Locust counted failed requests"),
        )

    if args.floor:
        floor = stats["floor"]
        n = int(floor["Request Count"]) - int(floor["Failure Count"])
        result = {
            "mode": "floor",
            "users": args.users,
            "seconds": args.seconds,
            "server": server,
            "floor_ms": {k: float(floor[k]) for k in ("50%", "95%", "99%")},
            "requests": n,
            "failures": int(floor["Failure Count"]),
            "requests_per_s": round(float(floor["Requests/s"]), 1),
            "gunicorn_cpu_ms_per_request": round(1000 * (cpu1 - cpu0) / max(n, 1), 2),
            "locust_cpu_ms_per_request": round(1000 * locust_cpu / max(n, 1), 2),
            "load_average": [round(load_before, 1), round(load_after, 1)],
        }
        (OUT / "annotation-floor.json").write_text(json.dumps(result, indent=2))
        print(f"bare-view floor: {args.users} users, {args.seconds} s, {server}, {settings_note}")
        print(f"  {percentiles(result['floor_ms'])}  ({n} requests, {result['failures']} failed)")
        print(
            f"  {result['requests_per_s']} requests/s; "
            f"gunicorn CPU {result['gunicorn_cpu_ms_per_request']} ms/request; "
            f"Locust CPU {result['locust_cpu_ms_per_request']} ms/request"
        )
        print(f"  load average {load_before:.1f} before, {load_after:.1f} after")
        return ledger.verdict()

    if "item page" not in stats or "save (submit)" not in stats:
        print(f"FAIL no item page or no save in the {args.seconds} s run: give --seconds more")
        return 1
    item, save = stats["item page"], stats["save (submit)"]
    next_item = item if args.plain else save  # what the annotator waits for after a save
    items_per_s = float(save["Requests/s"])
    result = {
        "users": args.users,
        "seconds": args.seconds,
        "workers": args.workers,
        "threads": args.threads,
        "server": server,
        "settings": settings_note,
        "pace": pace,
        "item_page_ms": {k: float(item[k]) for k in ("50%", "95%", "99%")},
        "save_ms": {k: float(save[k]) for k in ("50%", "95%", "99%")},
        "next_item_ms": {k: float(next_item[k]) for k in ("50%", "95%", "99%")},
        "path": path,
        "item_requests": int(item["Request Count"]),
        "item_failures": int(item["Failure Count"]),
        "saves": saves_ok,
        "save_failures": int(save["Failure Count"]),
        "items_per_s": round(items_per_s, 1),
        "gunicorn_cpu_ms_per_item": round(1000 * (cpu1 - cpu0) / max(saves_ok, 1), 2),
        "database": db_where,
        "postgres_cpu_ms_per_item_all_processes": round(1000 * (pg1 - pg0) / max(saves_ok, 1), 2),
        "postgres_cpu_ms_per_item_by_fifth": fifths(sampler.samples),
        "postgres_cpu_ms_per_item_own_backends": round(1000 * own / max(saves_ok, 1), 2),
        "locust_cpu_ms_per_item": round(1000 * locust_cpu / max(saves_ok, 1), 2),
        "wall_s": round(elapsed, 1),
        "load_average": [round(load_before, 1), round(load_after, 1)],
        "page_weight": weight,
    }
    ledger.expect(
        "annotations",
        saves_ok,
        before=stored0["annotations"],
        after=stored1["annotations"],
        in_flight=cut,
    )
    served = stored1["participants"] - stored0["participants"]
    ledger.users(asked=args.users, served=served)
    result.update(
        per_address=per_address,
        participants_stored=served,
        annotations_stored=stored1["annotations"] - stored0["annotations"],
        failed_requests_all=failed,
        honest=not ledger.problems(),
    )
    if floor_run is not None:
        server_ms = (
            result["gunicorn_cpu_ms_per_item"] + result["postgres_cpu_ms_per_item_own_backends"]
        )
        result["floor_same_run"] = {
            **{k: floor_run[k] for k in ("requests", "cpu_ms_per_request")},
            "item_server_cpu_over_two_floor_requests": round(
                server_ms / max(2 * floor_run["cpu_ms_per_request"], 1e-9), 2
            ),
        }
    (OUT / "annotation.json").write_text(json.dumps(result, indent=2))
    print(
        f"annotation load: {args.users} users ({pace}), {args.seconds} s, {server}, PostgreSQL "
        f"({db_where}), {settings_note}"
    )
    print(
        f"  item page  {percentiles(result['item_page_ms'])}  "
        f"({result['item_requests']} requests, {result['item_failures']} failed)"
    )
    print(
        f"  save       {percentiles(result['save_ms'])}  "
        f"({saves_ok} saved, {result['save_failures']} failed)"
    )
    nxt = result["next_item_ms"]
    print(f"  next item  p50 {nxt['50%']:.0f} ms  p95 {nxt['95%']:.0f} ms  (after each save)")
    print(f"  throughput {result['items_per_s']} items/s")
    print(
        f"  server CPU {result['gunicorn_cpu_ms_per_item']} ms/item (gunicorn); "
        f"PostgreSQL {result['postgres_cpu_ms_per_item_all_processes']} ms/item "
        f"(all its processes), "
        f"{result['postgres_cpu_ms_per_item_own_backends']} ms/item "
        f"(the backends of this database); Locust {result['locust_cpu_ms_per_item']} ms/item"
    )
    print(
        f"  item page  {weight['total_gzip'] / 1024:.1f} kB gzip in all "
        f"(HTML {weight['html_gzip'] / 1024:.1f} kB; "
        f"{weight['total_raw'] / 1024:.1f} kB uncompressed)"
    )
    if floor_run is not None:
        same = result["floor_same_run"]
        print(
            f"  floor right after ({args.with_floor} s, same server): gunicorn "
            f"{same['cpu_ms_per_request']} ms/request over {same['requests']} requests; the "
            f"item's server CPU (gunicorn + its PostgreSQL backends) = "
            f"{same['item_server_cpu_over_two_floor_requests']}x the floor of its two requests"
        )
    print(f"  load average {load_before:.1f} before, {load_after:.1f} after")
    print(
        f"  stored: {result['participants_stored']} participants (of {args.users} simulated), "
        f"{result['annotations_stored']} annotations "
        f"(the simulated users counted {saves_ok} saves); "
        f"{failed} failed requests in all (setup included)"
    )
    by_fifth = result["postgres_cpu_ms_per_item_by_fifth"]
    print(
        "  PostgreSQL CPU by fifth of the run: "
        + " / ".join(f"{f['ms_per_item']} ms/item ({f['items']} items)" for f in by_fifth)
    )
    honest = ledger.verdict()
    flat = slope_verdict(by_fifth, "PostgreSQL CPU per item")
    return honest or flat


if __name__ == "__main__":
    sys.exit(main())
