"""Judge runs side by side with the reference CLI: ``h2e bench judge`` (lilakk/how2everything,
lm-deluge on aiohttp) and how2review (a judge run launched through the service, worked by a
real Celery worker on PostgreSQL + Redis), interleaved round by round (h2e, how2review, h2e,
how2review, …), against one local OpenAI-compatible test server (tests/support/llm_server.py,
every reply after ``--latency`` s, the deterministic H.3 judge responder) and the same
``--n`` procedures + generations (bench_judge_run.py's data), both at ``--concurrency``
requests in flight. Ideal: concurrency / latency judgments/s.

The reference runs in its own virtual environment, ``var/peers/h2e`` (``python -m venv`` + pip
from the configured index: the repository snapshot with ``--no-deps`` and what its judge path
imports — pydantic, PyYAML, rich and lm-deluge ``--deluge-version``; its vLLM, datasets and
sentence-transformers dependencies are for other commands). The snapshot comes from
``H2E_SOURCE`` (see tests/perf/peers.py).

Per round: judgments/s over the whole command (h2e: process start to exit; how2review: launch
to the run's end), and over the server's request window (first request in → last reply out);
CPU ms per judgment of the whole worker tree (h2e: its process, from the kernel, also net of
its start-up, measured apart with ``--import-only``; how2review: the Celery worker's processes
from the launch to the end, its start-up not counted); peak RSS (sum of the tree's high-water
marks); the load average before and after. Figures go to tests/perf/out/peers_judge.{json,md}.

Every round is counted (tests/perf/_honest.py): the judgments stored, the requests the server
received for the round's model (one per judgment: a retried or refused request shows as a
mismatch) and how2review's failed items; a mismatch or a refusal fails the benchmark.

``--scale``: a judge run ten times longer, with its conditions (the exit code is 1 when one does
not hold): ``--n`` 30,000 judgments at 64 then at 512 in flight, and a how2review run of
``--memory-baseline`` 3,000 judgments at 64 beforehand. At 64: how2review's judgments/s over
the server's request window ≥ 93% of ideal, and its worker's peak memory ≤ 1.1× the 3,000-run's
and ≤ h2e's peak in the same round; at 512: ≥ 1.5× h2e's judgments/s over the server's window.

Run: ``.venv/bin/python tests/perf/bench_peers_judge.py [--n 3000] [--concurrency 64 [512 ...]]
[--latency 0.2] [--rounds 2] [--only h2e|how2review] [--memory-baseline N] [--scale]``.
The database is the benchmarks' own PostgreSQL cluster (tests/perf/_pg_cluster.py: initdb,
default settings, autovacuum on), its CPU per judgment reported with each how2review round;
``--machine-db`` uses ``DATABASE_URL`` instead (default
postgres://postgres@127.0.0.1:5432/h2r_peers; the scratch database ``h2r_peers_judge`` is
created and dropped). Environment: ``CELERY_BROKER_URL`` (default redis://127.0.0.1:6379/6),
``H2E_SOURCE``. The worker runs with ``DEBUG=0`` unless ``DEBUG`` is set.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/h2r_peers")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")
os.environ.setdefault("DEBUG", "0")

from tests.perf import peers  # noqa: E402
from tests.perf._honest import Ledger  # noqa: E402
from tests.perf._peers_judge_report import (  # noqa: E402
    SCALE_BASELINE_N,
    SCALE_CONCURRENCY,
    SCALE_N,
    report,
    scale_checks,
)
from tests.perf._pg_cluster import pg_cluster  # noqa: E402

DB_NAME = "h2r_peers_judge"
GENERATOR = "bench-gen"
BASELINE_GENERATOR = "bench-gen-baseline"


def h2e_env(src: Path, deluge_version: str) -> Path:
    return peers.venv(
        "h2e",
        [
            ["--no-deps", str(src)],
            ["pydantic", "PyYAML", "rich", f"lm-deluge=={deluge_version}"],
        ],
    )


def write_generations(path: Path) -> int:
    """The benchmark's generations as the reference reads them (generations.jsonl)."""
    from benchmarks.models import Generation

    n = 0
    with path.open("w") as fh:
        gens = Generation.objects.filter(generator__name=GENERATOR)
        for g in gens.select_related("procedure__topic").order_by("id"):
            p = g.procedure
            record = {
                "source_example_id": p.source_example_id,
                "topic": p.topic.name if p.topic else "",
                "goal": p.goal,
                "steps": p.steps,
                "resources": p.resources,
                "predicted_steps": g.predicted_steps,
            }
            fh.write(json.dumps(record) + "\n")
            n += 1
    return n


def baseline_generations(n: int) -> None:
    """A second generator with copies of the first ``n`` generations: the smaller run that the
    memory of the long one is compared with, on the same database."""
    from benchmarks.models import Generation, Generator

    gen = Generator.objects.create(name=BASELINE_GENERATOR, model="m")
    first = Generation.objects.filter(generator__name=GENERATOR).order_by("id")[:n]
    Generation.objects.bulk_create(
        [
            Generation(
                procedure_id=g.procedure_id,
                generator=gen,
                token_count=g.token_count,
                predicted_steps=g.predicted_steps,
            )
            for g in first
        ],
        batch_size=2000,
    )


def served(args) -> tuple[str, ...]:
    """The models the test server lists: how2review's launch check asks for its judge's."""
    from tests.support.llm_server import SERVED_MODELS

    rounds = [*range(1, args.rounds + 1), "baseline"]
    mine = [f"h2r-judge-{c}-{r}" for c in args.concurrency for r in rounds]
    return (*SERVED_MODELS, *mine)


def server_requests(server, model: str) -> list:
    return [r for r in server.requests if r.body.get("model") == model]


def server_window(server, model: str, latency: float) -> float:
    times = [r.received_at for r in server_requests(server, model)]
    return max(times) - min(times) + latency


def count(ledger: Ledger, server, model: str, stored: int, n: int) -> None:
    """The round's accounting: ``n`` judgments expected, ``stored`` found, and one request
    received per judgment (a refused or retried request shows as a mismatch)."""
    received = server_requests(server, model)
    faulted = [r for r in received if r.fault]
    ledger.expect(f"{model} judgments", n, after=stored)
    ledger.expect(f"{model} requests", n, after=len(received))
    if faulted:
        ledger.refused(len(faulted), f"{model}: the server faulted the request")


def h2e_round(python, src, server, gens, tmp: Path, r: int, args, concurrency, ledger) -> dict:
    model = f"h2e-judge-{concurrency}-{r}"
    out = tmp / f"h2e-{concurrency}-{r}"
    out.mkdir()
    prompts = {k: str(src / "prompts" / f"{k}.txt") for k in ("inference_base", "inference_inst")}
    prompts["judge"] = str(src / "prompts" / "judge.txt")
    config = {
        "out_root": str(out),
        "paths": {"generations": str(gens), "judgments": str(out / "judgments.jsonl")},
        "prompts": prompts,
        "evaluator": {
            "backend": "deluge",
            "provider": "openai",
            "model": model,
            "temperature": 0.0,
            "max_new_tokens": 2048,
            "max_requests_per_minute": 10_000_000,
            "max_tokens_per_minute": 10_000_000_000,
        },
    }
    cfg = out / "config.yaml"
    cfg.write_text(json.dumps(config))  # YAML is a superset of JSON
    cmd = [
        str(python),
        str(HERE / "peers_h2e_launcher.py"),
        "--base-url",
        server.base_url,
        "--model",
        model,
        "--concurrency",
        str(concurrency),
        "--config",
        str(cfg),
    ]
    env = dict(os.environ, OPENAI_API_KEY="bench-key", PYTHONUNBUFFERED="1")
    load0 = peers.load()
    server_cpu = peers.own_cpu()
    t0 = time.perf_counter()
    with (out / "h2e.log").open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=src, env=env, stdout=log, stderr=subprocess.STDOUT)
        code, cpu, rss = peers.wait_rusage(proc)
    wall = time.perf_counter() - t0
    server_cpu = peers.own_cpu() - server_cpu
    if code != 0:
        raise SystemExit(f"h2e exited {code}:\n{(out / 'h2e.log').read_text()[-3000:]}")
    lines = (out / "judgments.jsonl").read_text().splitlines()
    failed = sum(1 for line in lines if json.loads(line).get("parse_failed"))
    count(ledger, server, model, len(lines), args.n)
    if failed:
        ledger.refused(failed, f"{model}: judgments that failed to parse")
    return {
        "tool": "h2e",
        "concurrency": concurrency,
        "judgments": len(lines),
        "wall_s": wall,
        "window_s": server_window(server, model, args.latency),
        "cpu_s": cpu,
        "server_cpu_s": server_cpu,
        "peak_rss_mb": rss,
        "load": [load0, peers.load()],
    }


def h2r_round(
    server,
    tmp: Path,
    r,
    args,
    concurrency: int,
    ledger: Ledger,
    *,
    n: int,
    generator: str = GENERATOR,
    db_cpu=None,
) -> dict:
    from judging.models import JudgeRun, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.support.worker import start_worker

    model = f"h2r-judge-{concurrency}-{r}"
    judge = judge_services.judge_create(
        name=f"peers-judge-{concurrency}-{r}",
        backend="openai",
        base_url=server.base_url,
        model=model,
        concurrency=concurrency,
        timeout_s=30,
    )
    worker = start_worker(tmp, concurrency=1)
    try:
        load0 = peers.load()
        meter = peers.TreeMeter(worker.proc.pid).mark()
        server_cpu = peers.own_cpu()
        db0 = db_cpu() if db_cpu else 0.0
        t0 = time.perf_counter()
        run = services.judge_run_create(judge=judge, selection={"generators": [generator]})
        while True:
            run.refresh_from_db()
            if not run.is_active:
                break
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        server_cpu = peers.own_cpu() - server_cpu
        db_used = db_cpu() - db0 if db_cpu else None
        used = meter.stop()
    finally:
        worker.stop()
    if run.status != JudgeRun.Status.DONE:
        ledger.refused(1, f"{model}: the run ended {run.status}: {run.error}")
    stored = Judgment.objects.filter(judge=judge).count()
    count(ledger, server, model, stored, n)
    failed = Judgment.objects.filter(judge=judge, parse_failed=True).count() + run.n_failed
    if failed:
        ledger.refused(failed, f"{model}: judgments failed or not parsed")
    return {
        "tool": "how2review",
        "concurrency": concurrency,
        "judgments": stored,
        "wall_s": wall,
        "window_s": server_window(server, model, args.latency),
        "cpu_s": used["cpu_s"],
        "server_cpu_s": server_cpu,
        "db_cpu_s": db_used,
        "peak_rss_mb": used["peak_rss_mb"],
        "peaks_mb": used["peaks_mb"],
        "load": [load0, peers.load()],
    }


def h2e_startup(python, src, server, args) -> dict:
    cmd = [str(python), str(HERE / "peers_h2e_launcher.py"), "--base-url", server.base_url]
    cmd += ["--model", "startup", "--concurrency", str(args.concurrency[0]), "--import-only"]
    proc = subprocess.Popen(cmd, cwd=src)
    code, cpu, rss = peers.wait_rusage(proc)
    if code != 0:
        raise SystemExit("the reference CLI's imports failed (see above)")
    return {"cpu_s": cpu, "peak_rss_mb": rss}


H2R_STARTUP = """
import os, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
t = time.process_time()
import openai
openai.DefaultAioHttpClient  # the aiohttp transport, as a worker's first judge chunk loads it
print(time.process_time() - t)
"""


def h2r_startup() -> dict:
    """What how2review's worker pays once, when it starts (the ``openai`` client and its aiohttp
    transport, loaded by its main process before the pool forks: benchmarks.apps), measured
    apart in a fresh process: the analog of h2e's imports, which h2e pays in every run."""
    out = subprocess.run(
        [sys.executable, "-c", H2R_STARTUP],
        cwd=HERE.parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    return {"cpu_s": float(out.stdout.strip().splitlines()[-1])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=None, help="judgments a round (3,000; --scale 30,000)")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=None,
        help="requests in flight, one set of rounds each (64; --scale 64 512)",
    )
    ap.add_argument(
        "--rounds", type=int, default=None, help="rounds per concurrency (2; --scale 1)"
    )
    ap.add_argument("--only", choices=["h2e", "how2review"], default="")
    ap.add_argument("--deluge-version", default=os.environ.get("H2E_LM_DELUGE", "0.0.168"))
    ap.add_argument(
        "--memory-baseline",
        type=int,
        default=None,
        metavar="N",
        help="first, a how2review run of N judgments at the first concurrency (--scale 3,000)",
    )
    ap.add_argument(
        "--scale", action="store_true", help="the judge run at scale, its conditions checked"
    )
    ap.add_argument(
        "--machine-db",
        action="store_true",
        help="run on the PostgreSQL at DATABASE_URL instead of the benchmarks' own cluster",
    )
    args = ap.parse_args()
    scale = {"n": SCALE_N, "concurrency": list(SCALE_CONCURRENCY), "rounds": 1}
    scale["memory_baseline"] = SCALE_BASELINE_N
    plain = {"n": 3000, "concurrency": [64], "rounds": 2, "memory_baseline": 0}
    for key, value in (scale if args.scale else plain).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.scale and args.only:
        ap.error("--scale compares both tools: leave out --only")
    if args.memory_baseline and args.only == "h2e":
        ap.error("--memory-baseline is a how2review run: leave out --only h2e")
    with contextlib.ExitStack() as stack:
        cluster = None
        if not args.machine_db:
            cluster = stack.enter_context(pg_cluster(database="h2r_peers"))
            os.environ["DATABASE_URL"] = cluster.url("h2r_peers")
        return run(args, cluster)


def run(args, cluster) -> int:
    # Django is set up here (bench_judge_run), once DATABASE_URL names the database
    from tests.perf.bench_judge_run import connection, make_data  # noqa: I001
    from tests.judging.support import judge_responder
    from tests.support.llm_server import LLMTestServer

    db_cpu = cluster.cpu if cluster is not None else None
    where = "the machine's PostgreSQL (DATABASE_URL)"
    if cluster is not None:
        where = f"own cluster (default settings, autovacuum {cluster.settings('autovacuum')['autovacuum']})"
    versions = {"how2review": peers.git_head(), "Python": sys.version.split()[0]}
    python = src = None
    if args.only != "how2review":
        src, sha = peers.h2e_source()
        python = h2e_env(src, args.deluge_version)
        versions.update(
            {
                "how2everything": sha[:10],
                "lm-deluge": peers.version_of(python, "lm-deluge"),
                "aiohttp": peers.version_of(python, "aiohttp"),
            }
        )
    versions["openai"] = peers.version_of(Path(sys.executable), "openai")
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = DB_NAME
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    rows: list[dict] = []
    baseline = None
    ledger = Ledger("judge rounds")
    startup = None
    try:
        make_data(args.n)
        if args.memory_baseline:
            baseline_generations(args.memory_baseline)
        with connection.cursor() as cursor:  # analyzed after the bulk load, as one does
            cursor.execute("VACUUM (ANALYZE)")
        with (
            LLMTestServer(
                responder=judge_responder, latency_s=args.latency, models=served(args)
            ) as server,
            tempfile.TemporaryDirectory() as tmp_name,
        ):
            tmp = Path(tmp_name)
            gens = tmp / "generations.jsonl"
            assert write_generations(gens) == args.n
            startup = {}
            if python is not None:
                startup["h2e"] = h2e_startup(python, src, server, args)
            if args.only != "h2e":
                startup["how2review"] = h2r_startup()
            if args.memory_baseline:
                baseline = h2r_round(
                    server,
                    tmp,
                    "baseline",
                    args,
                    args.concurrency[0],
                    ledger,
                    n=args.memory_baseline,
                    generator=BASELINE_GENERATOR,
                    db_cpu=db_cpu,
                )
                rows.append(baseline)
                print(f"baseline how2review: {baseline}", flush=True)
            for c in args.concurrency:
                for r in range(1, args.rounds + 1):
                    if args.only != "how2review":
                        rows.append(h2e_round(python, src, server, gens, tmp, r, args, c, ledger))
                        print(f"{c} in flight, round {r} h2e: {rows[-1]}", flush=True)
                    if args.only != "h2e":
                        rows.append(
                            h2r_round(server, tmp, r, args, c, ledger, n=args.n, db_cpu=db_cpu)
                        )
                        print(f"{c} in flight, round {r} how2review: {rows[-1]}", flush=True)
                    server.requests.clear()  # what the rounds received is counted: let it go
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    text = report(rows, args, versions, startup) + f"\ndatabase: {where}"
    failed = ledger.verdict()
    checks = scale_checks(rows, baseline, args) if args.scale else []
    for line, holds in checks:
        print(f"scale: {'OK' if holds else 'FAIL'} {line}", flush=True)
        text += f"\n- {'OK' if holds else 'FAIL'}: {line}"
    print(text)
    peers.OUT.mkdir(parents=True, exist_ok=True)
    (peers.OUT / "peers_judge.md").write_text(text + "\n")
    (peers.OUT / "peers_judge.json").write_text(
        json.dumps(
            {"args": vars(args), "versions": versions, "rows": rows, "checks": checks}, indent=2
        )
    )
    return 1 if failed or not all(h for _, h in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
