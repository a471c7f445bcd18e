"""Benchmark: a mining batch through the LLM stages against a slow model. Target: >= 80% of the
ideal request rate, end to end.

The local OpenAI-compatible test server (its own process) answers every request after 200 ms
(``--latency``), with the yields of ``bench_mining_batch.py`` (the seed's Table 6: ~2.4
requests per document over the five LLM stages). The batch (``--n`` documents, default 5,000;
``--n 100000`` for the full corpus) is created from a gzip JSONL file, ingested and worked by
the run engine's chunks in this process (the executor a Celery worker runs), through the real
``openai`` client with ``--concurrency`` (64) requests in flight. The ideal rate is
``concurrency / latency`` (320 requests/s); the measured one is every request the batch made
divided by the wall time from creating the batch to its end (ingest, prompts, replies parsed,
every reply stored as it comes with at most ``concurrency`` sent and not yet stored, counters).
``--chunk-size`` is the batch option: how many documents a chunk holds at once (it takes more
as they finish). Run with ``DEBUG=0``, as a production worker runs (Django's debug cursor logs
every statement).

Run: ``DEBUG=0 .venv/bin/python tests/perf/bench_mining_llm.py [--n 5000] [--chunk-size 512]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review; a scratch
database ``bench_h2r_mining_llm`` is created and dropped).
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_mining_batch as reference  # noqa: E402 - the responder and the documents

os.environ["TEST_DATABASE_NAME"] = "bench_h2r_mining_llm"


def _serve(conn, latency: float) -> None:
    from tests.support.llm_server import LLMTestServer

    server = LLMTestServer(responder=reference.responder, latency_s=latency).start()
    conn.send(server.base_url)
    conn.recv()  # block until told to stop
    server.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--chunk-size", type=int, default=512)
    args = parser.parse_args()

    parent, child = mp.get_context("fork").Pipe()
    server = mp.get_context("fork").Process(target=_serve, args=(child, args.latency), daemon=True)
    server.start()
    base_url = parent.recv()

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.db.models import Sum

    from mining.models import MiningStageUsage
    from mining.selectors import batches as selectors
    from mining.services import batches as services

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings.MEDIA_ROOT = Path(tmp) / "media"
            plain = Path(tmp) / "docs.jsonl"
            reference.make_file(plain, args.n)
            path = Path(tmp) / "docs.jsonl.gz"
            with plain.open("rb") as src, gzip.open(path, "wb", compresslevel=1) as dst:
                shutil.copyfileobj(src, dst)
            config = {
                "backend": "openai",
                "base_url": base_url,
                "model": "gpt-4.1",
                "api_key_env": "",
                "concurrency": args.concurrency,
                "timeout_s": 60,
            }
            t0 = time.perf_counter()
            batch = reference.create_batch(path, config, {"chunk_size": args.chunk_size})
            batch = services.batch_run(batch_id=batch.pk)
            wall = time.perf_counter() - t0
            assert batch.status == "done" and batch.n_done == args.n, (batch.status, batch.n_done)
            usage = MiningStageUsage.objects.filter(batch=batch).aggregate(
                r=Sum("requests"), f=Sum("failed_requests")
            )
            requests, failed = usage["r"], usage["f"]
            ideal = args.concurrency / args.latency
            rate = requests / wall
            y = selectors.batch_yields(batch=batch)["total"]
            load = os.getloadavg()[0]
            print(
                f"{args.n:,} documents, chunk {args.chunk_size}: {requests:,} LLM requests "
                f"({failed} failed, {requests / args.n:.2f} per document), kept {y['kept']:,}; "
                f"load average {load:.1f} on {os.cpu_count()} cores"
            )
            ok = rate >= 0.8 * ideal and not failed
            print(
                f"end to end {wall:.1f} s: {rate:.0f} requests/s of the ideal {ideal:.0f} "
                f"({args.concurrency} in flight x {args.latency * 1000:.0f} ms) = "
                f"{rate / ideal:.0%} (target >= 80%) {'PASS' if ok else 'FAIL'}"
            )
            return 0 if ok else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        parent.send("stop")
        server.join(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
