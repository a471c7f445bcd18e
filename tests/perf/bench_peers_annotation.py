"""The annotator flow side by side with Potato (potato-annotation, from the package index):
``--users`` closed-loop annotators (no pause; 1 and 50 by default) against each, interleaved
(Potato, how2review, Potato, how2review, … for each user count), Locust headless on loopback,
``--seconds`` a run.

- how2review: bench_annotation.py's harness (gunicorn, 3 sync workers, production settings,
  PostgreSQL; the first item page, then each save answered with the next item in place, as the
  item page's script does; one study seeded for all runs, a fresh gunicorn each),
  its database renamed ``h2r_peers_annotation`` and its
  Locust output under tests/perf/out/peers/, so it never meets another run of that script.
- Potato: in its own virtual environment ``var/peers/potato`` (``python -m venv`` + pip
  ``potato-annotation==--potato-version``), a project made here (the same goals, reference and
  generated steps and 4 KB of source text per item, a yes/no "critical failure" choice and a
  free-text description, Prolific-style URL login, 3 annotators per item) served by
  ``potato start`` (its own server, as its documentation runs it). Each annotator enters with
  its own PROLIFIC_PID, then in a loop saves its labels (``/updateinstance``, as Potato's page
  does on each change) and moves on (``POST /annotate`` ``next_instance``, which answers with
  the next item's page): tests/perf/locustfile_potato.py.

Per run: items/s (saves per second), p50/p95 of the next item (how2review: the save that brings
it; Potato: its ``next_instance`` page) and of save, server CPU ms per
item (the server's process tree), the load average before and after; for how2review also its
database's CPU per item, in all and in the first and last fifth of the run
(tests/perf/_db_cost.py): a last fifth more than 15% above the first fails the run, as the
database's cost then grows with the study's tables. Figures go to
tests/perf/out/peers_annotation.{json,md}. Each run counts what the server stored — how2review's
annotations in its database, Potato's labelled items in its annotator state files — against the
saves the simulated users saw answered (tests/perf/_locust_saves.py, + at most one cut off per
user at the stop); a mismatch fails the script (exit 1), and so does any refused how2review
request (setup included). Potato's own refused requests are its result: shown in the table.
For each user count the script also fails when how2review's items/s (mean over the rounds) is
under ``--min-ratio`` (6) times Potato's, or its CPU per item — web workers and database
together — over ``--max-cpu-ratio`` (0.25) times Potato's server CPU per item.

Run: ``.venv/bin/python tests/perf/bench_peers_annotation.py [--users 1,50] [--seconds 20]
[--rounds 2] [--only potato|how2review] [--machine-db]``. how2review runs on the benchmarks' own
PostgreSQL cluster (tests/perf/_pg_cluster.py: initdb in a temporary folder, default settings,
autovacuum on, as in production; removed at the end); ``--machine-db``: on the PostgreSQL at
``PERF_PG_URL`` instead (default postgres://postgres@127.0.0.1:5432/postgres), for comparison.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from tests.perf import _annotation_server as srv  # noqa: E402
from tests.perf import _annotation_study as study  # noqa: E402
from tests.perf import _locust_saves, peers  # noqa: E402
from tests.perf._annotation_server import wait_listening  # noqa: E402
from tests.perf._cpu import postgres_cpu, process_cpu  # noqa: E402
from tests.perf._db_cost import CostSampler, fifths, slope_problem  # noqa: E402
from tests.perf._honest import Ledger, locust_refusals  # noqa: E402
from tests.perf._pg_cluster import pg_cluster  # noqa: E402

srv.DB_NAME = "h2r_peers_annotation"
srv.OUT = peers.OUT / "peers"  # its logs and Locust files; the static root
WORDS = "Measure the ingredients carefully and combine them in a clean bowl before heating gently"
N_STEPS = study.N_STEPS
PORTS = range(18600, 18700)
# what the simulated users counted (tests/perf/_locust_saves.py)
SAVES_FILE = srv.OUT / "saves.json"


def free_port() -> int:
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 18600-18699")


# --- Potato ---------------------------------------------------------------------------------


def potato_env(version: str) -> Path:
    return peers.venv("potato", [[f"potato-annotation=={version}"]])


def potato_project(home: Path, n_items: int) -> Path:
    """A Potato project of ``n_items`` items shaped like bench_annotation.py's study."""
    data = home / "data"
    data.mkdir(parents=True, exist_ok=True)
    source_text = " ".join([WORDS] * 45)
    with (data / "items.jsonl").open("w") as fh:
        for i in range(n_items):
            ref = "\n".join(f"{s}. {WORDS} (reference step {s})." for s in range(1, N_STEPS + 1))
            gen = "\n".join(f"{s}. {WORDS} (generated step {s})." for s in range(1, N_STEPS + 1))
            text = (
                f"Goal {i}: prepare a simple dish at home with basic tools.\n\n"
                f"Reference steps (L1):\n{ref}\n\nGenerated steps (L2):\n{gen}\n\n"
                f"Source: {source_text}"
            )
            fh.write(json.dumps({"id": f"item-{i}", "text": text}) + "\n")
    config = {
        "annotation_task_name": "Peers benchmark",
        "task_dir": str(home),
        "output_annotation_dir": str(home / "annotation_output"),
        "export_annotation_format": "jsonl",
        "data_files": [str(data / "items.jsonl")],
        "item_properties": {"id_key": "id", "text_key": "text"},
        "user_config": {"allow_all_users": True, "users": []},
        "login": {"type": "prolific"},
        "require_password": False,
        "max_annotations_per_user": 100000,
        "max_annotations_per_item": 3,
        "assignment_strategy": "fixed_order",
        "alert_time_each_instance": 10000000,
        "annotation_schemes": [
            {
                "annotation_type": "radio",
                "name": "critical_failure",
                "description": "Does L2 have a critical failure?",
                "labels": ["failure", "no failure"],
            },
            {
                "annotation_type": "text",
                "name": "failure_description",
                "description": "Describe the failure (steps of L1 and L2).",
            },
        ],
        "site_dir": "default",
    }
    path = home / "config.yaml"
    path.write_text(json.dumps(config, indent=2))  # YAML is a superset of JSON
    return path


def start_potato(python: Path, config: Path, log: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    potato = python.with_name("potato")
    proc = subprocess.Popen(
        [str(potato), "start", str(config), "-p", str(port)],
        cwd=config.parent,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return proc, wait_listening(proc, port, log, "potato", timeout_s=120)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def locust(locustfile: Path, port: int, users: int, seconds: int, env: dict) -> dict:
    prefix = srv.OUT / "locust"
    cmd = [str(Path(sys.executable).with_name("locust")), "-f", str(locustfile), "--headless"]
    cmd += ["-u", str(users), "-r", str(users), "-t", f"{seconds}s"]
    cmd += ["--host", f"http://127.0.0.1:{port}", "--csv", str(prefix), "--only-summary"]
    cmd += ["--loglevel", "WARNING", "--stop-timeout", "5"]
    SAVES_FILE.unlink(missing_ok=True)
    with (srv.OUT / "locust.log").open("wb") as log:
        subprocess.run(
            cmd,
            cwd=ROOT,
            env=dict(os.environ, **env, BENCH_SAVES_FILE=str(SAVES_FILE)),
            check=False,
            timeout=seconds + 120,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    with open(f"{prefix}_stats.csv", newline="") as fh:
        return {row["Name"]: row for row in csv.DictReader(fh)}


def row_from(
    tool: str,
    users: int,
    stats: dict,
    cpu_s: float,
    load0: float,
    ledger: Ledger,
    *,
    in_place: bool = False,
) -> dict:
    """One table row (``in_place``: the save's answer is the next item, how2review's item page
    with its script; else the next item is a page of its own); ``ledger`` holds the rows stored before and after the run: the saves the
    simulated users saw answered (tests/perf/_locust_saves.py) must equal the rows added (+ at
    most the saves cut off at the stop), and every refused request is listed."""
    none = {"Request Count": 0, "Failure Count": 0, "Requests/s": 0, "50%": 0, "95%": 0}
    item, save = stats.get("item page", none), stats.get("save (submit)", none)
    nxt = save if in_place else item
    saves, cut = _locust_saves.read(SAVES_FILE, users=users)
    ledger.expect("saved items", saves, before=ledger.before.get("saved items", 0), in_flight=cut)
    failed, details = locust_refusals(srv.OUT / "locust")
    ledger.refused(failed, "; ".join(details) or "failed request")
    return {
        "tool": tool,
        "users": users,
        "items_per_s": float(save["Requests/s"]),
        "saves": saves,
        "failures": int(item["Failure Count"]) + int(save["Failure Count"]),
        "next_item_ms": [float(nxt["50%"]), float(nxt["95%"])],
        "save_ms": [float(save["50%"]), float(save["95%"])],
        "server_cpu_ms_per_item": 1000 * cpu_s / max(saves, 1),
        "load": [load0, peers.load()],
        "stored": ledger.after["saved items"] - ledger.before["saved items"],
        "problems": ledger.problems(),
    }


def potato_run(python: Path, home: Path, users: int, args) -> dict:
    import shutil

    if home.exists():
        shutil.rmtree(home)  # fresh state: no annotator or label from the run before
    config = potato_project(home, args.items)
    proc, port = start_potato(python, config, home / "server.log")
    try:
        import urllib.request

        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60).read()  # warm-up
        load0 = peers.load()
        cpu0 = process_cpu(proc.pid)
        stats = locust(HERE / "locustfile_potato.py", port, users, args.seconds, {})
        cpu = process_cpu(proc.pid) - cpu0
    finally:
        stop(proc)
    stored, annotators = potato_stored(home)
    ledger = Ledger(f"Potato, {users} users").expect("saved items", 0, before=0)
    ledger.stored("saved items", stored).users(asked=users, served=annotators)
    return row_from("Potato", users, stats, cpu, load0, ledger)


def potato_stored(home: Path) -> tuple[int, int]:
    """(items with labels, annotators) in Potato's saved annotator states (each annotator's
    ``user_state.json``), read after the server stopped."""
    n = annotators = 0
    for state in (home / "annotation_output").glob("*/user_state.json"):
        labels = json.loads(state.read_text()).get("instance_id_to_label_to_value") or {}
        n += sum(1 for v in labels.values() if v)
        annotators += 1
    return n, annotators


# --- how2review (bench_annotation.py's harness) ---------------------------------------------


_SEEDED: dict[str, str] = {}
_DB: dict = {"cpu": postgres_cpu}  # the database's CPU seconds so far (main sets the cluster's)


def h2r_run(users: int, args) -> dict:
    """One run on the study seeded by the first (its items outlast every run's saves: each
    annotator is new, k = 3), on a fresh gunicorn."""
    if "slug" not in _SEEDED:
        srv.recreate_db()
        _SEEDED["slug"] = study.seed(args.items)
    slug = _SEEDED["slug"]
    proc = None
    try:
        proc, port = srv.start_gunicorn(3, srv.OUT / "gunicorn.log")
        srv.page_weight(port, slug)  # warm-up: one annotator's way in, as bench_annotation.py
        before = study.stored_counts(slug)
        load0 = peers.load()
        cpu0 = process_cpu(proc.pid)
        with CostSampler(_DB["cpu"], srv.db_url(srv.DB_NAME), "annotation_annotation") as db:
            stats = locust(
                HERE / "locustfile_annotation.py",
                port,
                users,
                args.seconds,
                {"BENCH_STUDY_SLUG": slug, "BENCH_N_STEPS": str(N_STEPS), "BENCH_MODE": "annotate"},
            )
        cpu = process_cpu(proc.pid) - cpu0
    finally:
        if proc is not None:
            stop(proc)
    after = study.stored_counts(slug)
    ledger = Ledger(f"how2review, {users} users").expect(
        "saved items", 0, before=before["annotations"]
    )
    ledger.stored("saved items", after["annotations"])
    ledger.users(asked=users, served=after["participants"] - before["participants"])
    row = row_from("how2review", users, stats, cpu, load0, ledger, in_place=True)
    # the database's CPU per item through the run: flat, or the row fails
    (_, c0, n0), (_, c1, n1) = db.samples[0], db.samples[-1]
    row["db_cpu_ms_per_item"] = 1000 * (c1 - c0) / max(n1 - n0, 1)
    row["db_cpu_by_fifth"] = fifths(db.samples)
    # the whole server side of an item: the web workers and the database (Potato keeps its
    # labels in its own process, so its server CPU is already its whole cost)
    row["total_cpu_ms_per_item"] = row["server_cpu_ms_per_item"] + row["db_cpu_ms_per_item"]
    line, grows = slope_problem(row["db_cpu_by_fifth"])
    row["db_cost"] = line
    if grows:
        row["problems"].append(line)
    return row


def report(rows: list[dict], args, versions: dict) -> str:
    body = [
        [
            i,
            r["tool"],
            r["users"],
            f"{r['items_per_s']:.1f}",
            f"{r['next_item_ms'][0]:.0f} / {r['next_item_ms'][1]:.0f}",
            f"{r['save_ms'][0]:.0f} / {r['save_ms'][1]:.0f}",
            f"{r['server_cpu_ms_per_item']:.1f}",
            f"{r.get('total_cpu_ms_per_item', r['server_cpu_ms_per_item']):.1f}",
            (
                f"{r['db_cpu_ms_per_item']:.1f} ({r['db_cpu_by_fifth'][0]['ms_per_item']} → "
                f"{r['db_cpu_by_fifth'][-1]['ms_per_item']})"
                if r.get("db_cpu_by_fifth")
                else "–"
            ),
            r.get("stored", "–"),
            r["failures"],
            f"{r['load'][0]:.2f} → {r['load'][1]:.2f}",
        ]
        for i, r in enumerate(rows, 1)
    ]
    head = [
        "#",
        "tool",
        "users",
        "items/s",
        "next item p50 / p95 ms",
        "save p50 / p95 ms",
        "server CPU ms/item",
        "with the database, ms/item",
        "database CPU ms/item (first → last fifth)",
        "items stored (rows, labels)",
        "failed requests",
        "load 1-min",
    ]
    lines = [
        f"closed-loop annotators, no pause, {args.seconds} s a run, {args.items} items, "
        f"Locust on the same {os.cpu_count()} CPUs; how2review's database: {args.database}",
        "versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        "",
        peers.table(head, body),
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", default="1,50")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--items", type=int, default=4000)
    ap.add_argument("--only", choices=["potato", "how2review"], default="")
    ap.add_argument(
        "--min-ratio",
        type=float,
        default=6.0,
        help="fail when how2review's items/s is under this multiple of Potato's (per user count)",
    )
    ap.add_argument(
        "--max-cpu-ratio",
        type=float,
        default=0.25,
        help="fail when how2review's CPU per item (web workers + database) is over this "
        "multiple of Potato's",
    )
    ap.add_argument("--potato-version", default=os.environ.get("POTATO_VERSION", "2.12.1"))
    ap.add_argument(
        "--machine-db",
        action="store_true",
        help="how2review on the PostgreSQL at PERF_PG_URL (its settings as they are) instead of "
        "the benchmarks' own cluster with default settings",
    )
    args = ap.parse_args()
    if args.only == "potato":
        args.database = "none (Potato alone)"
        return measure(args)
    if args.machine_db:
        args.database = "the machine's PostgreSQL (PERF_PG_URL), every process"
        return measure(args)
    with pg_cluster() as cluster:
        srv.PG_URL, _DB["cpu"] = cluster.admin_url, cluster.cpu
        auto = cluster.settings("autovacuum")["autovacuum"]
        args.database = f"own cluster (default settings, autovacuum {auto})"
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Every run of ``args`` on the database at ``srv.PG_URL``; the table, the verdict."""
    srv.OUT.mkdir(parents=True, exist_ok=True)
    versions = {"how2review": peers.git_head(), "Python": sys.version.split()[0]}
    python = None
    if args.only != "how2review":
        python = potato_env(args.potato_version)
        versions["potato-annotation"] = peers.version_of(python, "potato-annotation")
        versions["Flask"] = peers.version_of(python, "flask")
    versions["gunicorn"] = peers.version_of(Path(sys.executable), "gunicorn")
    versions["Locust"] = peers.version_of(Path(sys.executable), "locust")
    rows = []
    try:
        for users in [int(u) for u in args.users.split(",")]:
            for r in range(1, args.rounds + 1):
                if python is not None:
                    rows.append(potato_run(python, peers.PEERS / "potato-project", users, args))
                    print(f"round {r}, {users} users, Potato: {rows[-1]}", flush=True)
                if args.only != "potato":
                    rows.append(h2r_run(users, args))
                    print(f"round {r}, {users} users, how2review: {rows[-1]}", flush=True)
    finally:
        if _SEEDED:
            srv.drop_db()
    text = report(rows, args, versions)
    print(text)
    # stored = counted for both tools; a refused request fails how2review's rows only (a peer's
    # refusals are its result, shown in the table)
    bad = [
        f"row {i} ({r['tool']}): " + " | ".join(r["problems"])
        for i, r in enumerate(rows, 1)
        if r["problems"]
        and (r["tool"] == "how2review" or any("stored" in p for p in r["problems"]))
    ]
    for line in bad:
        print(f"honest: FAIL {line}", flush=True)
    ratios = peers.ratio_lines(rows, args.min_ratio, args.max_cpu_ratio)
    for line in ratios:
        print(line, flush=True)
    text += "\n\n" + "\n".join(ratios)
    (peers.OUT / "peers_annotation.md").write_text(text + "\n")
    (peers.OUT / "peers_annotation.json").write_text(
        json.dumps({"args": vars(args), "versions": versions, "rows": rows}, indent=2)
    )
    return 1 if bad or any(line.startswith("ratio: FAIL") for line in ratios) else 0


if __name__ == "__main__":
    sys.exit(main())
