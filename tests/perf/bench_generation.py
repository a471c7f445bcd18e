"""Generation-run benchmark.

1. App work per generation, pure Python: H.2 prompt build + step parsing + all six scorers
   (including o200k_base token counting of generated and reference steps), over synthetic items.
2. End to end (``--e2e``): a run of ``--n`` procedures against the local OpenAI-compatible test
   server answering after ``--latency`` s, ``--concurrency`` requests in flight, chunks driven in
   this process (``run_generation --inline`` path) on a scratch PostgreSQL database
   ``h2r_perf_generation`` (created and dropped on ``PERF_PG_URL``, default
   ``postgres://postgres@127.0.0.1:5432/postgres``). Reports generations/s against the ideal
   concurrency / latency.

Run: ``.venv/bin/python tests/perf/bench_generation.py [--items 2000] [--e2e --n 2000 --latency 0.2 --concurrency 64]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PG_DB = "h2r_perf_generation"

_TEXT = (
    "remove the cover carefully and place screws in a small bowl so none are lost while you "
    "work on the panel then loosen bolt tighten clockwise measure twice cut once mix flour "
    "water salt yeast knead dough for ten minutes until smooth elastic preheat oven to "
    "degrees check temperature with thermometer wipe surface"
)
WORDS = _TEXT.split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n)).capitalize() + "."


def synthetic(rng: random.Random) -> tuple[str, list[str], list[str], str]:
    n = rng.randint(5, 12)
    ref = [sentence(rng, rng.randint(8, 16)) for _ in range(n)]
    completion = "Here are the steps:\n" + "\n".join(
        f"{i}. {sentence(rng, rng.randint(8, 16))}" for i in range(1, n + 1)
    )
    return sentence(rng, 12), [sentence(rng, 2) for _ in range(5)], ref, completion


def bench_pure(items: int) -> None:
    from benchmarks import generation as gen
    from benchmarks import scorers as sc

    rng = random.Random(3)
    data = [synthetic(rng) for _ in range(items)]
    scorers = sc.get_scorers()
    sc.score_example(
        sc.ScoreInput(predicted_steps=["warm up"], reference_steps=["warm up"]), scorers
    )  # load BPE
    times = []
    for goal, resources, ref, completion in data:
        t0 = time.perf_counter()
        gen.build_prompt(variant="instruct", goal=goal, resources=resources, n_steps=len(ref))
        steps = gen.parse_steps(completion).steps
        sc.score_example(
            sc.ScoreInput(predicted_steps=steps, reference_steps=ref, completion=completion),
            scorers,
        )
        times.append(time.perf_counter() - t0)
    times.sort()
    print(
        f"pure app work per generation over {items} items (prompt + parse + 6 scorers incl. o200k tokens):"
    )
    print(
        f"  mean {statistics.mean(times) * 1e3:.3f} ms, p50 {times[len(times) // 2] * 1e3:.3f} ms, "
        f"p99 {times[int(len(times) * 0.99)] * 1e3:.3f} ms"
    )


def bench_e2e(n: int, latency: float, concurrency: int) -> None:
    import psycopg

    server_url = os.environ.get("PERF_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    base = server_url.rsplit("/", 1)[0]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")
    try:
        os.environ["DATABASE_URL"] = f"{base}/{PG_DB}"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from benchmarks.models import Dataset, Generation, Generator, Procedure
        from benchmarks.services.generation_runs import generation_run_create
        from core.runs import engine
        from tests.support.llm_server import LLMTestServer

        rng = random.Random(5)
        dataset = Dataset.objects.create(name="perf-gen")
        Procedure.objects.bulk_create(
            [
                Procedure(
                    dataset=dataset,
                    source_example_id=f"p{i}",
                    goal=sentence(rng, 12),
                    resources=[sentence(rng, 2) for _ in range(5)],
                    steps=[sentence(rng, rng.randint(8, 16)) for _ in range(rng.randint(5, 12))],
                )
                for i in range(n)
            ]
        )

        def responder(req):
            k = rng.randint(5, 12)
            return "\n".join(f"{i}. {sentence(rng, 12)}" for i in range(1, k + 1))

        with LLMTestServer(responder=responder, latency_s=latency) as server:
            run = generation_run_create(
                generator=Generator.objects.create(name="perf"),
                dataset=dataset,
                model="test-model",
                base_url=server.base_url,
                concurrency=concurrency,
                chunk_size=max(concurrency * 4, 64),
                start=False,
                backend_options={"timeout_s": 30},
            )
            t0 = time.perf_counter()
            run = engine.execute_inline(run)
            elapsed = time.perf_counter() - t0
        ideal = concurrency / latency
        rate = n / elapsed
        print(
            f"end to end: {n} generations in {elapsed:.2f} s = {rate:.1f}/s; ideal {ideal:.0f}/s "
            f"({rate / ideal:.0%}); status {run.status}, stored {Generation.objects.count()}"
        )
        from django.db import connections

        connections.close_all()
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--e2e", action="store_true")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    bench_pure(args.items)
    if args.e2e:
        bench_e2e(args.n, args.latency, args.concurrency)


if __name__ == "__main__":
    main()
