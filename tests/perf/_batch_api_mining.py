"""``bench_mining_batch.py --batch-api``: a mining batch at the paper's scale in Batch API mode
(see that module's docstring for what is measured and when it fails).

The pieces: the local batch server (tests/support/batch_server.py) in a process of its own,
working every open batch on its own every ``--server-every`` s as a provider does; the
benchmarks' own PostgreSQL cluster; a real Celery worker that works the batch's chunks; and this
process, which launches the batch, does what beat does (``batch_runs.poll``) and samples the
worker's memory and the requests stored as the run goes.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import threading
import time
from pathlib import Path

N = 104_000  # documents: ~252,000 requests at the Table 6 yields (~2.43 a document)
MIN_REQUESTS = 252_000
MAX_GROWTH = 1.10
MAX_APP_SHARE = 0.5
# A provider's pace, far above any provider's: a file of 50,000 requests ends 50 s after it was
# created, where Anthropic's Message Batches documentation says most batches finish "in less
# than 1 hour" and one may take "more than 5 minutes", and OpenAI's window is 24 hours.
PROVIDER_PACE = 1000.0
LABEL = "mining.MiningBatch"


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch-api", action="store_true", help="the batch at scale, Batch API mode"
    )
    parser.add_argument("--min-requests", type=int, default=MIN_REQUESTS)
    parser.add_argument("--max-growth", type=float, default=MAX_GROWTH)
    parser.add_argument("--max-app-share", type=float, default=MAX_APP_SHARE)
    parser.add_argument("--poll", type=float, default=1.0, help="s between beat's batch polls")
    parser.add_argument(
        "--server-every", type=float, default=0.5, help="s between the batch server's passes"
    )
    parser.add_argument(
        "--provider-pace",
        type=float,
        default=PROVIDER_PACE,
        help="requests a second the batch server works each file at, as a provider would "
        "(0: a file ends at the server's next pass, as fast as Python answers it)",
    )
    parser.add_argument(
        "--batch-max-requests",
        type=int,
        default=0,
        help="requests per batch file (default: the backend's)",
    )


# -- the batch server, in its own process --------------------------------------------------------
def _serve(conn, responder, every: float, pace: float) -> None:
    from tests.support.batch_server import BatchTestServer

    server = BatchTestServer(responder=responder)
    stop = threading.Event()
    seen: dict[str, float] = {}  # batch id -> when a pass first saw it open

    def provider() -> None:  # open batches are worked on their own, each at the provider's pace
        while not stop.wait(every):
            with server.lock:
                now = time.monotonic()
                for batch in server._open(None):
                    since = seen.setdefault(batch["id"], now)
                    size = server.files[batch["input_file_id"]].count(b"\n")
                    if not pace or now - since >= size / pace:
                        server.finish(batch_id=batch["id"])

    with server:
        worker = threading.Thread(target=provider, daemon=True)
        worker.start()
        conn.send(server.base_url)
        conn.recv()  # until told to stop
        stop.set()
        worker.join()
        times = os.times()
        ran = list(server.ran.values())
        conn.send(
            {
                "answered": sum(ran),
                "answered_twice": sum(v - 1 for v in ran if v > 1),
                "batches": len(server.batches),
                "cpu_s": times.user + times.system,
                "calls": dict(server.calls),
            }
        )


class Sampler:
    """Every ``every`` s: (s since start, the worker tree's RSS and summed high-water marks in
    MB, requests stored so far by the batch's usage rows)."""

    def __init__(self, pid: int, db_url: str, batch_id: int, every: float = 0.5) -> None:
        import psutil

        self.root, self.db_url, self.batch_id, self.every = (
            psutil.Process(pid),
            db_url,
            batch_id,
            every,
        )
        self.samples: list[tuple[float, float, float, int]] = []
        self.hwm: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.t0 = time.monotonic()

    def sample(self, conn) -> None:
        import psutil

        from tests.perf.peers import _vm_hwm_kb

        rss = 0
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for p in procs:
            try:
                rss += p.memory_info().rss
                self.hwm[p.pid] = max(self.hwm.get(p.pid, 0), _vm_hwm_kb(p.pid))
            except psutil.NoSuchProcess:
                pass
        stored = conn.execute(
            "SELECT coalesce(sum(requests), 0) FROM mining_miningstageusage WHERE batch_id = %s",
            [self.batch_id],
        ).fetchone()[0]
        peak = sum(self.hwm.values()) / 1024
        self.samples.append((time.monotonic() - self.t0, rss / 2**20, peak, int(stored)))

    def _loop(self) -> None:
        import psycopg

        with psycopg.connect(self.db_url, autocommit=True) as conn:
            while not self._stop.wait(self.every):
                self.sample(conn)
            self.sample(conn)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def peak_at(self, share: float) -> tuple[float, float]:
        """(the tree's summed high-water mark once ``share`` of the final requests were stored,
        the same at the end), MB."""
        total = self.samples[-1][3]
        at = next(s for s in self.samples if s[3] >= share * total)
        return at[2], self.samples[-1][2]


def stored_counts(batch_id: int) -> dict[str, int]:
    """The requests the database holds for the batch, counted three ways, and its documents."""
    from django.db import connection
    from django.db.models import Sum

    from benchmarks.models import ProviderBatch
    from mining.models import MiningDocument, MiningStageUsage
    from mining.stages import LLM_STAGES

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM mining_miningdocument d, jsonb_object_keys(d.trace) k "
            "WHERE d.batch_id = %s AND k = ANY(%s)",
            [batch_id, list(LLM_STAGES)],
        )
        traced = cursor.fetchone()[0]
    usage = MiningStageUsage.objects.filter(batch_id=batch_id).aggregate(
        r=Sum("requests"), f=Sum("failed_requests")
    )
    rows = ProviderBatch.objects.filter(run_label=LABEL, run_id=batch_id)
    return {
        "traced": traced,
        "usage": usage["r"] or 0,
        "failed": usage["f"] or 0,
        "batch_rows_stored": rows.aggregate(s=Sum("n_stored"))["s"] or 0,
        "batch_rows_sent": rows.aggregate(s=Sum("n_requests"))["s"] or 0,
        "batch_rows_returned": rows.aggregate(s=Sum("n_returned"))["s"] or 0,
        "batch_files": rows.count(),
        "documents": MiningDocument.objects.filter(batch_id=batch_id).count(),
        "pending": MiningDocument.objects.filter(batch_id=batch_id, outcome="pending").count(),
    }


def main(args, bench) -> int:
    from tests.perf import peers
    from tests.perf._honest import Ledger
    from tests.perf._pg_cluster import pg_cluster

    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")
    parent, child = mp.get_context("fork").Pipe()
    server = mp.get_context("fork").Process(
        target=_serve,
        args=(child, bench.responder, args.server_every, args.provider_pace),
        daemon=True,
    )
    server.start()
    base_url = parent.recv()
    try:
        with pg_cluster(database="h2r_mining") as cluster, tempfile.TemporaryDirectory() as tmp:
            os.environ["DATABASE_URL"] = cluster.url("h2r_mining")
            os.environ["HOW2REVIEW_VAR_DIR"] = str(Path(tmp) / "var")  # the worker's media too
            return _run(args, bench, cluster, Path(tmp), base_url, parent, Ledger, peers)
    finally:
        if server.is_alive():
            server.terminate()
        server.join(timeout=10)


def _run(args, bench, cluster, tmp: Path, base_url: str, server, Ledger, peers) -> int:
    import django

    django.setup()
    from django.db import connection

    from benchmarks.services import batch_runs
    from core.runs import engine
    from mining.models import MiningBatch
    from tests.support.worker import start_worker

    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    db_name = connection.settings_dict["NAME"]
    path = tmp / "docs.jsonl"
    size = bench.make_file(path, args.n)
    config = {
        "backend": "openai",
        "mode": "batch",
        "base_url": base_url,
        "model": "gpt-4.1",
        "api_key_env": "",
        "timeout_s": 600,
    }
    if args.batch_max_requests:
        config["batch_max_requests"] = args.batch_max_requests
    worker = start_worker(tmp, concurrency=1)
    load0 = peers.load()
    try:
        meter = peers.TreeMeter(worker.proc.pid).mark()
        db0, me0 = cluster.cpu(), peers.own_cpu()
        t0 = time.perf_counter()
        batch = bench.create_batch(path, config, {"chunk_size": 256})
        engine.launch(batch)
        with Sampler(worker.proc.pid, cluster.url(db_name), batch.pk) as sampler:
            polls = 0
            while True:
                time.sleep(args.poll)
                batch.refresh_from_db()
                if not batch.is_active:
                    break
                batch_runs.poll()  # what beat does every BATCH_POLL_SECONDS
                polls += 1
        wall = time.perf_counter() - t0
        db_cpu, me_cpu = cluster.cpu() - db0, peers.own_cpu() - me0
        used = meter.stop()
    finally:
        worker.stop()
    load1 = peers.load()
    server.send("stop")
    provider = server.recv()
    counts = stored_counts(batch.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        db_bytes = cursor.fetchone()[0]
    batch = MiningBatch.objects.get(pk=batch.pk)
    answered = provider["answered"]

    ledger = Ledger("mining batch in Batch API mode")
    ledger.expect("requests in the documents' traces", answered, after=counts["traced"])
    ledger.expect("requests in the usage rows", answered, after=counts["usage"])
    ledger.expect(
        "requests in the provider-batch rows", answered, after=counts["batch_rows_stored"]
    )
    ledger.expect("requests sent in batch files", answered, after=counts["batch_rows_sent"])
    ledger.expect("documents done", args.n, after=counts["documents"] - counts["pending"])
    if provider["answered_twice"]:
        ledger.refused(provider["answered_twice"], "requests the server answered more than once")
    if counts["failed"]:
        ledger.refused(counts["failed"], "requests that failed")
    if batch.status != "done":
        ledger.refused(1, f"the batch ended {batch.status}: {batch.error}")
    honest = ledger.verdict()

    at10, end = sampler.peak_at(0.10)
    growth = end / at10
    app_cpu = used["cpu_s"] + db_cpu
    share = app_cpu / wall
    lines = [
        f"{args.n:,} documents ({size / 1e6:.0f} MB JSONL), Batch API mode, {provider['batches']} "
        f"batch files ({counts['batch_files']} rows), {answered:,} requests answered, "
        f"{counts['batch_rows_returned']} returned unrun; the server's pace "
        f"{f'{args.provider_pace:,.0f} requests/s a file' if args.provider_pace else 'none'}; "
        f"{os.cpu_count()} CPUs, load average "
        f"{load0:.2f} → {load1:.2f}",
        f"wall {wall:.1f} s = {answered / wall:,.0f} requests/s, {args.n / wall:,.0f} documents/s "
        f"({polls} polls every {args.poll:g} s)",
        f"CPU: worker {used['cpu_s']:.1f} s ({1000 * used['cpu_s'] / answered:.2f} ms a request), "
        f"database {db_cpu:.1f} s ({1000 * db_cpu / answered:.2f} ms), batch server "
        f"{provider['cpu_s']:.1f} s ({1000 * provider['cpu_s'] / answered:.2f} ms), this process "
        f"(polls, samples) {me_cpu:.1f} s",
        f"worker peak RSS (summed high-water marks of its processes): {at10:.0f} MB once 10% of "
        f"the requests were stored, {end:.0f} MB at the end ({growth:.2f}×); tree RSS at the end "
        f"{sampler.samples[-1][1]:.0f} MB",
        f"database size: {db_bytes / 2**20:,.0f} MiB ({db_bytes / args.n / 1024:.1f} KiB a document)",
    ]
    checks = [
        (f"{answered:,} requests ≥ {args.min_requests:,}", answered >= args.min_requests),
        (f"memory flat: {growth:.2f}× ≤ {args.max_growth}×", growth <= args.max_growth),
        (
            f"the app's CPU (worker + database) {app_cpu:.1f} s = {share:.0%} of the wall time "
            f"(≤ {args.max_app_share:.0%}); the batch server's {provider['cpu_s']:.1f} s = "
            f"{provider['cpu_s'] / wall:.0%}",
            share <= args.max_app_share,
        ),
    ]
    for line in lines:
        print(line, flush=True)
    for line, holds in checks:
        print(f"scale: {'OK' if holds else 'FAIL'} {line}", flush=True)
    by_time = [
        f"{t:.0f}s {rss:.0f}/{hwm:.0f} MB {n:,}"
        for t, rss, hwm, n in sampler.samples[:: max(1, len(sampler.samples) // 20)]
    ]
    print("samples (s, RSS/peak MB, requests stored): " + "; ".join(by_time), flush=True)
    connection.close()  # the cluster, and the database with it, is removed at the end
    return 1 if honest or not all(h for _, h in checks) else 0
