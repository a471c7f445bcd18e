"""Bulk import benchmark: 7,000 procedures + 70,000 generations (10 generators of 7,000).

Generates realistic synthetic JSONL files (8–12 steps of ~20 words, resources, a few KB of
source text, reference-style generation records with prompt and completion, no token counts),
then runs the real management commands against a fresh database:

- SQLite: a temporary file;
- PostgreSQL: a scratch database ``h2r_perf_import`` created and dropped on the server named by
  ``PERF_PG_URL`` (default ``postgres://postgres@127.0.0.1:5432/postgres``); skipped if unreachable.

Run: ``.venv/bin/python tests/perf/bench_import.py [--procedures 7000] [--generators 10] [--backends sqlite,postgres]``
Target: the whole import (procedures + all generations) under 30 s on each backend.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 30.0
PG_DB = "h2r_perf_import"

WORDS = (  # noqa: SIM905 (a readable sentence, split once)
    "remove the cover carefully and place screws in a small bowl so none are lost while you work on "
    "the panel then loosen bolt tighten clockwise measure twice cut once mix flour water salt yeast "
    "knead dough for ten minutes until smooth elastic preheat oven to degrees check temperature with "
    "thermometer wipe surface clean cloth apply thin layer of primer let dry overnight sand lightly "
    "before second coat disconnect power supply unplug cable attach bracket wall using anchors level"
).split()
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


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n)).capitalize() + "."


def make_files(
    folder: Path, *, n_procedures: int, n_generators: int, seed: int = 7
) -> tuple[Path, list[Path]]:
    rng = random.Random(seed)
    procedures = folder / "procedures.jsonl"
    examples = []
    with open(procedures, "w", encoding="utf-8") as out:
        for i in range(n_procedures):
            steps = [sentence(rng, rng.randint(15, 25)) for _ in range(rng.randint(8, 12))]
            rec = {
                "schema_version": "how2bench.example.v1",
                "source_example_id": f"doc-{i:06d}",
                "url": f"https://example.test/how-to/{i}",
                "source_text": " ".join(
                    sentence(rng, 18) for _ in range(rng.randint(20, 45))
                ),  # ~2.5–6 KB
                "topic": TOPICS[i % len(TOPICS)],
                "goal": sentence(rng, 14),
                "resources": [" ".join(rng.choices(WORDS, k=2)) for _ in range(rng.randint(2, 8))],
                "steps": steps,
            }
            examples.append(
                (rec["source_example_id"], rec["topic"], rec["goal"], rec["resources"], steps)
            )
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    generation_files = []
    for g in range(n_generators):
        path = folder / f"generations-{g}.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            for sid, topic, goal, resources, steps in examples:
                predicted = [sentence(rng, rng.randint(15, 25)) for _ in range(len(steps))]
                prompt = (
                    f"Goal: {goal}\nResources: {json.dumps(resources)}\nWrite {len(steps)} steps."
                    + " x" * 300
                )
                rec = {
                    "schema_version": "how2bench.generation.v1",
                    "generator_id": f"model-{g}__deadbeef",
                    "generation_prompt_sha256": "deadbeef" * 8,
                    "source_example_id": sid,
                    "topic": topic,
                    "goal": goal,
                    "steps": steps,
                    "resources": resources,
                    "model_completion": "\n".join(f"{k + 1}. {s}" for k, s in enumerate(predicted)),
                    "predicted_steps": predicted,
                    "prompt": prompt,
                    "generator": {"backend": "vllm", "provider": "", "model": f"org/model-{g}"},
                }
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        generation_files.append(path)
    return procedures, generation_files


def child(folder: Path) -> None:
    """Runs inside a process whose DATABASE_URL is the fresh database: migrate, then time the commands."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    django.setup()
    import io

    from django.core.management import call_command

    call_command("migrate", verbosity=0, skip_checks=True)
    results = {}
    c0 = time.process_time()
    t0 = time.perf_counter()
    out = io.StringIO()
    call_command(
        "import_procedures", str(folder / "procedures.jsonl"), "--dataset", "perf", stdout=out
    )
    results["procedures_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    per_file = []
    for path in sorted(folder.glob("generations-*.jsonl")):
        ts = time.perf_counter()
        call_command(
            "import_generations",
            str(path),
            "--generator",
            path.stem,
            "--dataset",
            "perf",
            stdout=out,
        )
        per_file.append(time.perf_counter() - ts)
    results["generations_s"] = time.perf_counter() - t1
    results["generation_file_s"] = per_file
    results["total_s"] = time.perf_counter() - t0
    results["total_cpu_s"] = (
        time.process_time() - c0
    )  # this process only (not the PostgreSQL server)
    results["load"] = os.getloadavg()[0]
    ts = time.perf_counter()
    call_command(
        "import_procedures", str(folder / "procedures.jsonl"), "--dataset", "perf", stdout=out
    )
    results["reimport_procedures_s"] = time.perf_counter() - ts
    ts = time.perf_counter()
    call_command(
        "export_procedures",
        "--dataset",
        "perf",
        "-o",
        str(folder / "export-procedures.jsonl"),
        stderr=out,
    )
    call_command(
        "export_generations",
        "--generator",
        "generations-0",
        "-o",
        str(folder / "export-g0.jsonl"),
        stderr=out,
    )
    results["export_procedures_plus_one_generator_s"] = time.perf_counter() - ts
    from benchmarks.models import Generation, Procedure

    results["rows"] = {
        "procedures": Procedure.objects.count(),
        "generations": Generation.objects.count(),
    }
    print("RESULT " + json.dumps(results))


def run_backend(name: str, database_url: str, folder: Path) -> dict:
    env = dict(os.environ, DATABASE_URL=database_url, HOW2REVIEW_VAR_DIR=str(folder / "var"))
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(folder)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{name} run failed:\n{proc.stdout}\n{proc.stderr}")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def postgres_scratch(server_url: str):
    import psycopg

    conn = psycopg.connect(server_url, autocommit=True)
    conn.execute(f"DROP DATABASE IF EXISTS {PG_DB}")
    conn.execute(f"CREATE DATABASE {PG_DB}")
    return conn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", default=None)
    parser.add_argument("--procedures", type=int, default=7000)
    parser.add_argument("--generators", type=int, default=10)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    if args.child:
        child(Path(args.child))
        return

    with tempfile.TemporaryDirectory(prefix="h2r-bench-import-") as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        procedures, gens = make_files(
            folder, n_procedures=args.procedures, n_generators=args.generators
        )
        size = sum(p.stat().st_size for p in [procedures, *gens]) / 1e6
        print(
            f"synthetic files: {args.procedures} procedures + {args.procedures * args.generators} generations "
            f"({args.generators} files), {size:.0f} MB, made in {time.perf_counter() - t:.1f} s"
        )
        for backend in args.backends.split(","):
            if backend == "sqlite":
                url = f"sqlite:///{folder / 'perf.sqlite3'}"
                result = run_backend("sqlite", url, folder)
            elif backend == "postgres":
                server = os.environ.get(
                    "PERF_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres"
                )
                try:
                    conn = postgres_scratch(server)
                except Exception as exc:  # noqa: BLE001
                    print(f"postgres: skipped ({exc})")
                    continue
                try:
                    base = server.rsplit("/", 1)[0]
                    result = run_backend("postgres", f"{base}/{PG_DB}", folder)
                finally:
                    conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
                    conn.close()
            else:
                raise SystemExit(f"unknown backend {backend!r}")
            files = result["generation_file_s"]
            verdict = "OK" if result["total_s"] < TARGET_S else "OVER TARGET"
            print(
                f"{backend}: import total {result['total_s']:.1f} s ({verdict}, target {TARGET_S:.0f} s) = "
                f"procedures {result['procedures_s']:.1f} s + generations {result['generations_s']:.1f} s "
                f"({min(files):.2f}–{max(files):.2f} s per file of {args.procedures}); "
                f"re-import procedures (all unchanged) {result['reimport_procedures_s']:.1f} s; "
                f"export procedures + one generator {result['export_procedures_plus_one_generator_s']:.1f} s; "
                f"rows {result['rows']}; importer CPU {result['total_cpu_s']:.1f} s; "
                f"load average {result['load']:.1f} on {os.cpu_count()} cores"
            )


if __name__ == "__main__":
    main()
