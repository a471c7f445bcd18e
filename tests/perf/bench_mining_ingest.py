"""Benchmark: corpus-scale ingest of a mining batch. Target: >= 20,000 documents/s, peak RSS
< 500 MB, growing < 10% from the smallest to the largest corpus (memory flat with size).

Synthetic web documents (~600 characters, the 14 topics, ``id``/``url``/``topic``/``text``) are
written as gzip JSONL shards of ``--shard-size`` documents into filesystem storage; a batch
over the shard directory (``source``) is read into its document rows the way a worker's first
chunk does it (``batch_ingest``: shards streamed one after another, rows written with COPY in
bounded chunks, one transaction). Each size is ingested in a fresh child process, so its peak
RSS (``ru_maxrss``) is the ingest's own (Django loaded included).

Run: ``.venv/bin/python tests/perf/bench_mining_ingest.py [--sizes 100000,1000000]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review; a scratch
database ``bench_h2r_ingest`` is created and dropped).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_h2r_ingest")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

TOPICS = [
    "Art & Design",
    "Crime & Law",
    "Education & Jobs",
    "Electronics & Hardware",
    "Fashion & Beauty",
    "Food & Dining",
    "Health",
    "Home & Hobbies",
    "Industrial",
    "Religion",
    "Science, Math & Technology",
    "Sports & Fitness",
    "Transportation",
    "Travel & Tourism",
]
_TEXT = (
    "preheat the oven to degrees mix flour water salt yeast in a large bowl knead dough for "
    "ten minutes until smooth cover and let rise shape loaf place on tray bake golden brown "
    "cool rack slice serve tighten loosen bolt wrench jack car tire remove mount spare check"
)
WORDS = _TEXT.split()


def write_shards(folder: Path, n: int, shard_size: int) -> int:
    """``n`` documents in gzip JSONL shards; returns the compressed bytes written."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    sentences = [" ".join(rng.choices(WORDS, k=14)).capitalize() + "." for _ in range(500)]
    size = 0
    for start in range(0, n, shard_size):
        path = folder / f"part-{start // shard_size:05d}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as fh:
            for i in range(start, min(n, start + shard_size)):
                text = "\n".join(rng.choices(sentences, k=7))
                fh.write(
                    json.dumps(
                        {
                            "id": f"doc-{i}",
                            "url": f"https://example.org/{i}",
                            "topic": TOPICS[i % len(TOPICS)],
                            "text": f"How to do thing {i}\n{text}",
                        }
                    )
                    + "\n"
                )
        size += path.stat().st_size
    return size


def child(media: str, n: int) -> None:
    """Ingest the shards under ``media``/corpus-N as one batch; print one JSON line."""
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    settings.MEDIA_ROOT = Path(media)
    from mining.models import MiningDocument
    from mining.services import batches as services

    batch = services.batch_create(
        name="ingest", source=f"corpus-{n}", backends={}, stages=[2], start=False
    )
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, c0 = time.perf_counter(), time.process_time()
    total = services.batch_ingest(batch=batch)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert total == n == MiningDocument.objects.filter(batch=batch).count(), total
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {MiningDocument._meta.db_table}")
    print(
        json.dumps(
            {
                "n": n,
                "seconds": seconds,
                "cpu": cpu,
                "rss_before_mb": rss0 / 1024,
                "peak_rss_mb": peak / 1024,
            }
        ),
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--shard-size", type=int, default=100_000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]

    import django

    django.setup()
    from django.db import connection

    old_name = connection.settings_dict["NAME"]
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    url = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{test_name}"
    results = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in sizes:
                t0 = time.perf_counter()
                nbytes = write_shards(Path(tmp) / f"corpus-{n}", n, args.shard_size)
                print(
                    f"{n:,} documents: {nbytes / 1e6:.0f} MB of gzip shards written in "
                    f"{time.perf_counter() - t0:.0f} s",
                    flush=True,
                )
                out = subprocess.run(
                    [sys.executable, __file__, "--child", tmp, str(n)],
                    env={**os.environ, "DATABASE_URL": url},
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if out.returncode:
                    print(out.stdout, out.stderr, file=sys.stderr)
                    return 1
                r = json.loads(out.stdout.strip().splitlines()[-1])
                results.append(r)
                print(
                    f"  ingested in {r['seconds']:.1f} s = {n / r['seconds']:,.0f} documents/s "
                    f"(this process's CPU {r['cpu']:.1f} s, the rest PostgreSQL's); "
                    f"peak RSS {r['peak_rss_mb']:.0f} MB (after Django setup "
                    f"{r['rss_before_mb']:.0f} MB)",
                    flush=True,
                )
                for shard in (Path(tmp) / f"corpus-{n}").iterdir():
                    shard.unlink()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    load = os.getloadavg()[0]
    rate = min(r["n"] / r["seconds"] for r in results)
    peak = max(r["peak_rss_mb"] for r in results)
    growth = results[-1]["peak_rss_mb"] / results[0]["peak_rss_mb"] - 1
    ok = rate >= 20_000 and peak < 500 and growth < 0.10
    print(
        f"slowest {rate:,.0f} documents/s (target >= 20,000), peak RSS {peak:.0f} MB (< 500), "
        f"growth {growth:+.1%} from {results[0]['n']:,} to {results[-1]['n']:,} (< 10%); "
        f"load average {load:.1f} on {os.cpu_count()} cores: {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
