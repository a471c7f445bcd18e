"""Benchmark: how long a mining chunk takes to pick its next documents in a large batch with
per-topic budgets (``Intake.take``, :mod:`mining.services.budgets`). The chunk takes
more documents every half window (256 documents at the default 512), on the thread that feeds
the model, so this time is time no request is sent.

A batch of ``--n`` synthetic documents (14 topics, ``bench_mining_batch.py``'s generator) is
ingested into a scratch PostgreSQL database, with ``desired_valid_per_topic`` set; then 256
documents are taken at three cursor positions, with every document pending and again with the
first 60% finished. ``topic_counts`` (the grouped recount an execution does once) is timed too.
Target: a take under 50 ms at 100,000 documents.

Run: ``DEBUG=0 .venv/bin/python tests/perf/bench_mining_intake.py [--n 100000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_mining_batch as reference  # noqa: E402 - the documents (sets up sys.path, Django)

os.environ["TEST_DATABASE_NAME"] = "bench_h2r_mining_intake"


def _timed(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--take", type=int, default=256)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from mining.models import MiningDocument
    from mining.services.budgets import Intake, topic_counts
    from mining.services.ingest import batch_ingest

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    worst = 0.0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings.MEDIA_ROOT = Path(tmp) / "media"
            path = Path(tmp) / "docs.jsonl"
            reference.make_file(path, args.n)
            config = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
            batch = reference.create_batch(path, config, {"desired_valid_per_topic": args.n})
            batch_ingest(batch=batch, beat=lambda: None)
            pks = list(
                MiningDocument.objects.filter(batch=batch)
                .order_by("pk")
                .values_list("pk", flat=True)
            )
            print(f"{len(pks):,} documents, 14 topics, desired_valid_per_topic set")
            for label, done in (("all pending", 0), ("60% finished", int(len(pks) * 0.6))):
                if done:
                    MiningDocument.objects.filter(batch=batch, pk__lte=pks[done]).update(
                        outcome="kept", stage_reached="final_filter"
                    )
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
                counts = _timed(lambda: topic_counts(batch=batch))
                print(f"{label}: topic_counts (once per chunk) {counts * 1000:.1f} ms")
                for at in (done, (done + len(pks)) // 2, len(pks) - 2 * args.take):
                    recounted = topic_counts(batch=batch)  # the execution's one recount

                    def take(at=at, recounted=recounted):
                        intake = Intake(batch)  # a fresh execution past the one recount
                        intake.counts = {t: dict(c) for t, c in recounted.items()}
                        intake.last_pk = pks[at]
                        assert len(intake.take(args.take)) == args.take

                    t = _timed(take)
                    worst = max(worst, t)
                    print(f"  take {args.take} after document {at:,}: {t * 1000:.1f} ms")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    ok = worst < 0.05
    print(f"slowest take {worst * 1000:.1f} ms (target < 50 ms) {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
