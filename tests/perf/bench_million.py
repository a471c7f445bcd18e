"""The annotator path at a million stored labels: a study seeded in bulk with ``--labels``
(1,000,000) stored annotations against the same study with ``--small`` (10,000), both in one
run on the benchmarks' own PostgreSQL cluster (tests/perf/_pg_cluster.py: initdb in a temporary
folder, default settings, autovacuum on), one database each.

1. **Seeding**: bench_annotation.py's study (``--items`` free items with 4 KB of source text,
   k = 3; tests/perf/_annotation_study.py ``seed``), made once and copied as the other
   database (``CREATE DATABASE … TEMPLATE``), then in each the labels written with ``COPY`` —
   items fully labelled by k annotators, 100 items an annotator, their assignments and
   annotations (``seed_labels``) — and the tables analyzed, as after any bulk load.
2. **The item path**, rounds interleaved (small, large, small, …): gunicorn with 3 sync
   workers and production settings (tests/perf/_annotation_server.py), ``--users`` annotators
   with a random pause of 0 to 2 × ``--think`` s after each item (locustfile_annotation.py).
   Per study: the server's CPU per item (gunicorn + the PostgreSQL backends of its database)
   and the next item's p95, means over the rounds; the large study's over the small one's must
   be within ``--ratio`` (1.15×). Each round counts the rows stored against the saves
   (tests/perf/_honest.py) and the database's CPU per item by fifth (tests/perf/_db_cost.py:
   a last fifth more than 15% above the first fails).
3. **The agreement report** of the large study, computed once out of any request, in a
   process of its own under a memory limit (``--report-max-gib``, 6) and a time limit, and
   stored in the cache the web workers share (Redis at ``--cache-url``, emptied first); then
   shown: the report page, fetched by a researcher through gunicorn, in at most
   ``--report-max-s`` (5 s).
4. **The annotation export** of the large study (one row per stored label, JSONL, streamed)
   from one gunicorn worker warmed by a page first: every row in at most ``--export-max-s``
   (60 s), the worker's resident memory growing by at most ``--export-max-mib`` (100 MiB)
   over its size before the request (sampled every 0.1 s).

Any failed condition, refused request or count mismatch prints ``FAIL`` and exits 1. Figures go
to tests/perf/out/million.json.

Run: ``.venv/bin/python tests/perf/bench_million.py [--labels 1000000 --small 10000 --users 50
--think 0.5 --seconds 20 --rounds 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.perf import _annotation_server as srv  # noqa: E402
from tests.perf import _locust_saves  # noqa: E402
from tests.perf._annotation_server import OUT, page_weight, start_gunicorn  # noqa: E402
from tests.perf._annotation_study import seed, seed_labels, stored_counts  # noqa: E402
from tests.perf._cpu import backend_cpu, backend_cpu_spent, process_cpu  # noqa: E402
from tests.perf._db_cost import CostSampler, fifths, slope_problem  # noqa: E402
from tests.perf._honest import Ledger, locust_refusals  # noqa: E402
from tests.perf._pg_cluster import pg_cluster  # noqa: E402
from tests.perf.bench_annotation import run_locust  # noqa: E402

MIB = 1024 * 1024


def use_db(name: str) -> None:
    """Point the scratch-database name, the servers started next and this process's Django
    connection at the database ``name``."""
    srv.DB_NAME = name
    os.environ["DATABASE_URL"] = srv.db_url(name)
    try:
        from django.db import connections
    except ImportError:
        return
    from django.conf import settings

    if settings.configured:
        connections.close_all()
        connections.settings["default"]["NAME"] = name
        connections["default"].settings_dict["NAME"] = name


def seeded(args) -> dict[str, dict]:
    """Both studies: the study of free items made once (migrations, ``seed``) in the small
    study's database and copied as the large one's (``CREATE DATABASE … TEMPLATE``), then each
    given its stored labels."""
    import psycopg

    small, large = "h2r_million_small", "h2r_million_large"
    use_db(small)
    srv.recreate_db()
    t0 = time.monotonic()
    slug = seed(args.items, per_address=args.users * args.rounds + 2)
    from django.db import connections

    connections.close_all()
    with psycopg.connect(srv.PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{large}"')
        conn.execute(f'CREATE DATABASE "{large}" TEMPLATE "{small}"')
    print(f"the study of free items: {time.monotonic() - t0:.1f} s, migrations included")
    studies = {}
    for tag, name, n_labels in (("small", small, args.small), ("large", large, args.labels)):
        use_db(name)
        t1 = time.monotonic()
        counts = seed_labels(slug, n_labels)
        seconds = time.monotonic() - t1
        connections.close_all()
        print(f"seeded {name}: {n_labels:,} labels ({counts}) in {seconds:.1f} s", flush=True)
        studies[tag] = {
            "db": name,
            "slug": slug,
            "labels": n_labels,
            "seed_s": round(seconds, 1),
            "rows": counts,
        }
    return studies


def autovacuum_quiet(cluster, timeout_s: float = 600) -> float:
    """Wait until no autovacuum worker runs (one started by the bulk load would otherwise
    run during a measured round); the seconds waited."""
    import psycopg

    t0 = time.monotonic()
    with psycopg.connect(cluster.admin_url, autocommit=True) as conn:
        while time.monotonic() - t0 < timeout_s:
            busy = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'"
            ).fetchone()[0]
            if not busy:
                break
            time.sleep(1)
    return time.monotonic() - t0


def stop_server(proc) -> None:
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def item_path(study: dict, cluster, args, tag: str) -> dict:
    """One round of the item path on ``study``'s database: figures and problems."""
    use_db(study["db"])
    waited = autovacuum_quiet(cluster)
    proc = None
    try:
        proc, port = start_gunicorn(3, OUT / "million-gunicorn.log")
        page_weight(port, study["slug"])  # warm-up: one annotator's way in
        before = stored_counts(study["slug"])
        load0 = os.getloadavg()[0]
        cpu0 = process_cpu(proc.pid)
        own0 = backend_cpu(srv.PG_URL, srv.DB_NAME)
        with CostSampler(cluster.cpu, srv.db_url(srv.DB_NAME), "annotation_annotation") as db:
            stats, _ = run_locust(port, study["slug"], args.users, args.seconds, think=args.think)
        gunicorn_s = process_cpu(proc.pid) - cpu0
        own_s = backend_cpu_spent(own0, backend_cpu(srv.PG_URL, srv.DB_NAME))
    finally:
        stop_server(proc)
    after = stored_counts(study["slug"])
    from django.db import connections

    connections.close_all()
    failed, lines = locust_refusals(OUT / "annotation")
    saves, cut = _locust_saves.read(OUT / "annotation-saves.json", users=args.users)
    ledger = Ledger(f"item path, {tag}")
    ledger.refused(failed, "; ".join(lines) or "Locust counted failed requests")
    ledger.expect(
        "annotations",
        saves,
        before=before["annotations"],
        after=after["annotations"],
        in_flight=cut,
    )
    ledger.users(asked=args.users, served=after["participants"] - before["participants"])
    save = stats.get("save (submit)")
    if save is None:  # the round ended before any simulated user got past the entry
        raise RuntimeError(
            f"item path, {tag}: no save in the {args.seconds} s round (the entries took it "
            "all): give --seconds more"
        )
    spans = fifths(db.samples)
    slope, grows = slope_problem(spans)
    problems = ledger.problems() + ([slope] if grows else [])
    row = {
        "study": tag,
        "labels_before": before["annotations"],
        "saves": saves,
        "items_per_s": round(float(save["Requests/s"]), 1),
        "next_item_ms": {k: float(save[k]) for k in ("50%", "95%", "99%")},
        "gunicorn_ms_per_item": round(1000 * gunicorn_s / max(saves, 1), 3),
        "database_ms_per_item": round(1000 * own_s / max(saves, 1), 3),
        "server_ms_per_item": round(1000 * (gunicorn_s + own_s) / max(saves, 1), 3),
        "database_by_fifth": spans,
        "database_slope": slope,
        "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
        "autovacuum_waited_s": round(waited, 1),
        "problems": problems,
    }
    print(
        f"item path, {tag} ({before['annotations']:,} labels stored): {row['items_per_s']} "
        f"items/s, next item p50 {save['50%']} / p95 {save['95%']} ms, server CPU "
        f"{row['server_ms_per_item']} ms/item (gunicorn {row['gunicorn_ms_per_item']} + "
        f"database {row['database_ms_per_item']}), load {row['load'][0]} -> {row['load'][1]}; "
        f"database by fifth: {slope}",
        flush=True,
    )
    ledger.verdict()
    return row


def researcher_cookie() -> str:
    """A superuser's session on the current database: its ``sessionid`` cookie."""
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.contrib.sessions.backends.db import SessionStore

    user = get_user_model().objects.create_superuser("bench-researcher", "r@example.org", "x" * 20)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return f"sessionid={session.session_key}"


class RssPeak:
    """The largest growth of any gunicorn worker's resident memory over its size when the
    meter started, sampled every 0.1 s on a side thread."""

    def __init__(self, master_pid: int) -> None:
        import psutil

        self.workers = psutil.Process(master_pid).children()
        self.start = {p.pid: p.memory_info().rss for p in self.workers}
        self.peak = dict(self.start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        import psutil

        while not self._stop.wait(0.1):
            for p in self.workers:
                with suppress(psutil.NoSuchProcess):  # a worker that ended: its peak stands
                    self.peak[p.pid] = max(self.peak[p.pid], p.memory_info().rss)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        growth = {pid: self.peak[pid] - self.start[pid] for pid in self.start}
        pid = max(growth, key=growth.get)
        return {
            "worker_rss_before_mib": round(self.start[pid] / MIB, 1),
            "worker_rss_peak_mib": round(self.peak[pid] / MIB, 1),
            "worker_rss_growth_mib": round(growth[pid] / MIB, 1),
        }


def fetch(port: int, path: str, cookie: str, *, consume=None) -> tuple[int, float, int]:
    """(status, seconds, bytes) of a GET as the researcher; ``consume(chunk)`` sees the body."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Cookie": cookie})
    t0 = time.monotonic()
    n = 0
    with urllib.request.urlopen(req, timeout=600) as resp:
        while chunk := resp.read(1 << 16):
            n += len(chunk)
            if consume is not None:
                consume(chunk)
        status = resp.status
    return status, time.monotonic() - t0, n


def report_in_a_run(study: dict, args) -> dict:
    """The agreement report of ``study`` computed once, out of any request, as a run does: a
    process of its own (``--compute-report``) under a memory limit of ``--report-max-gib``
    and ``--report-timeout-s``, which stores it in the shared cache the web workers read."""
    import resource
    import subprocess

    import redis

    redis.Redis.from_url(args.cache_url).flushdb()  # no report of an earlier run is shown
    limit = int(args.report_max_gib * 1024**3)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t0 = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--compute-report", study["db"], study["slug"]],
            env=dict(srv.server_env(), CACHE_URL=args.cache_url, PERF_PG_URL=srv.PG_URL),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=args.report_timeout_s,
            preexec_fn=cap,
        )
    except subprocess.TimeoutExpired:
        return {"computed": False, "why": f"not done after {args.report_timeout_s} s"}
    seconds = round(time.monotonic() - t0, 1)
    if done.returncode:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return {"computed": False, "seconds": seconds, "why": why[:300]}
    return {"computed": True, "seconds": seconds, **json.loads(done.stdout.splitlines()[-1])}


def compute_report(db: str, slug: str) -> int:
    """``--compute-report``: the study's report computed and stored in the cache."""
    import resource

    use_db(db)
    import django

    django.setup()
    from annotation.models import Study
    from annotation.selectors.report import compute_study_report, study_report

    t0 = time.monotonic()
    study = Study.objects.get(slug=slug)
    compute_study_report(study_id=study.pk)  # what the report's worker task does
    compute_s = time.monotonic() - t0
    report = study_report(study=study)  # from the cache
    print(
        json.dumps(
            {
                "compute_s": round(compute_s, 1),
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "annotators": report["n_annotators"],
                "pairs": report["cohen_kappa"]["summary"]["n_pairs"],
                "pairs_listed": len(report["cohen_kappa"]["pairs"]),
            }
        )
    )
    return 0


def report_and_export(study: dict, cluster, args) -> dict:
    """The large study's agreement report computed in a run and shown, and its export."""
    use_db(study["db"])
    from annotation.models import Annotation, Study

    s = Study.objects.get(slug=study["slug"])
    labels = Annotation.objects.filter(participant__study=s).count()
    cookie = researcher_cookie()
    from django.db import connections

    connections.close_all()
    report = report_in_a_run(study, args)
    print(f"agreement report in a run: {report}", flush=True)
    out = {"labels": labels, "report": report, "report_shown_s": []}
    os.environ["CACHE_URL"] = args.cache_url  # the web workers read the report stored there
    proc = None
    try:
        # one worker, so the one measured is the one that serves; warmed by a page first
        proc, port = start_gunicorn(1, OUT / "million-gunicorn.log", timeout=args.export_max_s * 2)
        status, _, _ = fetch(port, f"/study/manage/{s.pk}/", cookie)
        if status != 200:
            raise RuntimeError(f"the study's page answered {status}")
        if report["computed"]:
            for _ in range(3):
                status, seconds, size = fetch(port, f"/study/report/{s.pk}/", cookie)
                if status != 200:
                    raise RuntimeError(f"the report page answered {status}")
                out["report_shown_s"].append(round(seconds, 2))
        lines = [0]

        def count(chunk: bytes) -> None:
            lines[0] += chunk.count(b"\n")

        meter = RssPeak(proc.pid)
        cpu0, db0 = process_cpu(proc.pid), cluster.cpu()
        status, seconds, size = fetch(
            port, f"/study/manage/{s.pk}/export.jsonl", cookie, consume=count
        )
        out.update(
            export_status=status,
            export_s=round(seconds, 1),
            export_web_cpu_s=round(process_cpu(proc.pid) - cpu0, 1),
            export_database_cpu_s=round(cluster.cpu() - db0, 1),
            export_rows=lines[0],
            export_mib=round(size / MIB, 1),
            **meter.stop(),
        )
        print(f"export: {out}", flush=True)
    finally:
        stop_server(proc)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", type=int, default=1_000_000)
    ap.add_argument("--small", type=int, default=10_000)
    ap.add_argument("--items", type=int, default=4000, help="free items for the item path")
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--think", type=float, default=0.5, metavar="S")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ratio", type=float, default=1.15)
    ap.add_argument("--report-max-s", type=float, default=5.0)
    ap.add_argument("--export-max-s", type=float, default=60.0)
    ap.add_argument("--export-max-mib", type=float, default=100.0)
    ap.add_argument(
        "--cache-url",
        default=os.environ.get("CACHE_URL", "redis://127.0.0.1:6379/0"),
        help="the Redis database the web workers share as their cache (emptied first)",
    )
    ap.add_argument("--report-max-gib", type=float, default=6.0)
    ap.add_argument("--report-timeout-s", type=int, default=300)
    ap.add_argument("--compute-report", nargs=2, metavar=("DB", "SLUG"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compute_report:
        return compute_report(*args.compute_report)
    OUT.mkdir(parents=True, exist_ok=True)
    with pg_cluster() as cluster:
        srv.PG_URL = cluster.admin_url
        auto = cluster.settings("autovacuum")["autovacuum"]
        print(f"own cluster (default settings, autovacuum {auto})", flush=True)
        return run(args, cluster)


def run(args, cluster) -> int:
    load0 = os.getloadavg()[0]
    studies = seeded(args)
    rows = []
    for r in range(args.rounds):
        for tag in ("small", "large"):
            rows.append(item_path(studies[tag], cluster, args, f"{tag}, round {r + 1}"))
    big = report_and_export(studies["large"], cluster, args)
    load1 = os.getloadavg()[0]

    def mean(tag: str, key: str, sub: str | None = None) -> float:
        values = [
            (r[key][sub] if sub else r[key]) for r in rows if r["study"].startswith(tag + ",")
        ]
        return sum(values) / len(values)

    cpu_ratio = mean("large", "server_ms_per_item") / mean("small", "server_ms_per_item")
    p95_ratio = mean("large", "next_item_ms", "95%") / mean("small", "next_item_ms", "95%")
    checks = [
        (
            cpu_ratio <= args.ratio,
            f"server CPU per item, {args.labels:,} labels over {args.small:,}: "
            f"{cpu_ratio:.3f}x (at most {args.ratio}x)",
        ),
        (
            p95_ratio <= args.ratio,
            f"next item p95, {args.labels:,} labels over {args.small:,}: {p95_ratio:.3f}x "
            f"(at most {args.ratio}x)",
        ),
        (
            bool(big["report_shown_s"]) and max(big["report_shown_s"]) <= args.report_max_s,
            f"agreement report shown in {' / '.join(map(str, big['report_shown_s']))} s once "
            f"computed (at most {args.report_max_s} s; computed in a run: {big['report']})"
            if big["report"]["computed"]
            else f"agreement report not computed in a run: {big['report']}",
        ),
        (
            big["export_rows"] == big["labels"] and big["export_s"] <= args.export_max_s,
            f"export: {big['export_rows']:,} rows of {big['labels']:,} stored labels in "
            f"{big['export_s']} s ({big['export_mib']} MiB; at most {args.export_max_s} s); CPU: "
            f"web worker {big['export_web_cpu_s']} s, database {big['export_database_cpu_s']} s",
        ),
        (
            big["worker_rss_growth_mib"] <= args.export_max_mib,
            f"web worker during the export: {big['worker_rss_before_mib']} -> "
            f"{big['worker_rss_peak_mib']} MiB, +{big['worker_rss_growth_mib']} MiB "
            f"(at most +{args.export_max_mib} MiB)",
        ),
    ]
    checks += [(not r["problems"], f"{r['study']}: " + " | ".join(r["problems"])) for r in rows]
    result = {
        "args": vars(args),
        "studies": studies,
        "rounds": rows,
        "server_cpu_ratio": round(cpu_ratio, 3),
        "next_item_p95_ratio": round(p95_ratio, 3),
        **big,
        "load": [round(load0, 2), round(load1, 2)],
        "checks": [{"ok": ok, "line": line} for ok, line in checks],
    }
    (OUT / "million.json").write_text(json.dumps(result, indent=2))
    for ok, line in checks:
        if ok and line.endswith(": "):
            continue  # a round with no problem
        print(f"million: {'OK' if ok else 'FAIL'} {line}", flush=True)
    print(f"load average {load0:.2f} at the start, {load1:.2f} at the end", flush=True)
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
