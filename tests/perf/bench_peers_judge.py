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

Run: ``.venv/bin/python tests/perf/bench_peers_judge.py [--n 3000] [--concurrency 64]
[--latency 0.2] [--rounds 2] [--only h2e|how2review]``. Environment: ``DATABASE_URL`` (default
postgres://postgres@127.0.0.1:5432/h2r_peers; the scratch database ``h2r_peers_judge`` is
created and dropped), ``CELERY_BROKER_URL`` (default redis://127.0.0.1:6379/6), ``H2E_SOURCE``.
The worker runs with ``DEBUG=0`` unless ``DEBUG`` is set.
"""

from __future__ import annotations

import argparse
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
from tests.perf.bench_judge_run import connection, make_data  # noqa: E402 - sets up Django

DB_NAME = "h2r_peers_judge"


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
        for g in Generation.objects.select_related("procedure__topic").order_by("id"):
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


def server_window(server, model: str, latency: float) -> float:
    times = [r.received_at for r in server.requests if r.body.get("model") == model]
    return max(times) - min(times) + latency


def h2e_round(python, src, server, gens, tmp: Path, r: int, args) -> dict:
    model = f"h2e-judge-{r}"
    out = tmp / f"h2e-{r}"
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
        str(args.concurrency),
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
    assert len(lines) == args.n and failed == 0, (len(lines), failed)
    return {
        "tool": "h2e",
        "judgments": len(lines),
        "wall_s": wall,
        "window_s": server_window(server, model, args.latency),
        "cpu_s": cpu,
        "server_cpu_s": server_cpu,
        "peak_rss_mb": rss,
        "load": [load0, peers.load()],
    }


def h2r_round(server, tmp: Path, r: int, args) -> dict:
    from judging.models import JudgeRun, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.support.worker import start_worker

    model = f"h2r-judge-{r}"
    judge = judge_services.judge_create(
        name=f"peers-judge-{r}",
        backend="openai",
        base_url=server.base_url,
        model=model,
        concurrency=args.concurrency,
        timeout_s=30,
    )
    worker = start_worker(tmp, concurrency=1)
    try:
        load0 = peers.load()
        meter = peers.TreeMeter(worker.proc.pid).mark()
        server_cpu = peers.own_cpu()
        t0 = time.perf_counter()
        run = services.judge_run_create(judge=judge, selection={"generators": ["bench-gen"]})
        while True:
            run.refresh_from_db()
            if not run.is_active:
                break
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        server_cpu = peers.own_cpu() - server_cpu
        used = meter.stop()
    finally:
        worker.stop()
    assert run.status == JudgeRun.Status.DONE, (run.status, run.error)
    n = Judgment.objects.filter(judge=judge).count()
    assert n == args.n and not Judgment.objects.filter(judge=judge, parse_failed=True).exists()
    return {
        "tool": "how2review",
        "judgments": n,
        "wall_s": wall,
        "window_s": server_window(server, model, args.latency),
        "cpu_s": used["cpu_s"],
        "server_cpu_s": server_cpu,
        "peak_rss_mb": used["peak_rss_mb"],
        "load": [load0, peers.load()],
    }


def h2e_startup(python, src, server, args) -> dict:
    cmd = [str(python), str(HERE / "peers_h2e_launcher.py"), "--base-url", server.base_url]
    cmd += ["--model", "startup", "--concurrency", str(args.concurrency), "--import-only"]
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


def report(rows: list[dict], args, versions: dict, startup: dict | None) -> str:
    ideal = args.concurrency / args.latency
    out = []
    for i, row in enumerate(rows, 1):
        per = 1000 * row["cpu_s"] / row["judgments"]
        net = ""
        paid = (startup or {}).get(row["tool"]) if row["tool"] == "h2e" else None
        if paid is not None:
            net = f"{1000 * (row['cpu_s'] - paid['cpu_s']) / row['judgments']:.2f}"
        rate = row["judgments"] / row["wall_s"]
        out.append(
            [
                i,
                row["tool"],
                row["judgments"],
                f"{row['wall_s']:.2f}",
                f"{rate:.1f} ({100 * rate / ideal:.0f}%)",
                f"{row['judgments'] / row['window_s']:.1f}",
                f"{per:.2f}",
                net or "–",
                f"{1000 * row['server_cpu_s'] / row['judgments']:.2f}",
                f"{row['peak_rss_mb']:.0f}",
                f"{row['load'][0]:.2f} → {row['load'][1]:.2f}",
            ]
        )
    head = [
        "#",
        "tool",
        "judgments",
        "wall s",
        "judgments/s (of ideal)",
        "judgments/s in the server's window",
        "CPU ms/judgment",
        "net of start-up",
        "test server CPU ms/request",
        "peak RSS MB",
        "load 1-min",
    ]
    text = peers.table(head, out)
    means = []
    for tool in ("h2e", "how2review"):
        mine = [r for r in rows if r["tool"] == tool]
        if mine:
            rate = sum(r["judgments"] / r["wall_s"] for r in mine) / len(mine)
            cpu = sum(1000 * r["cpu_s"] / r["judgments"] for r in mine) / len(mine)
            means.append(f"{tool}: {rate:.1f} judgments/s, {cpu:.2f} ms CPU/judgment")
    lines = [
        f"{args.n} judgments a round, {args.concurrency} in flight, replies after "
        f"{1000 * args.latency:.0f} ms (ideal {ideal:.0f}/s); {os.cpu_count()} CPUs",
        "versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
    ]
    if startup and "h2e" in startup:
        lines.append(
            f"h2e start-up (imports, measured apart): {startup['h2e']['cpu_s']:.2f} s CPU, "
            f"{startup['h2e']['peak_rss_mb']:.0f} MB"
        )
    if startup and "how2review" in startup:
        lines.append(
            "how2review start-up (the openai client and its aiohttp transport, measured apart): "
            f"{startup['how2review']['cpu_s']:.2f} s CPU, paid when the worker starts (its main "
            "process, before the pool forks), not by a run"
        )
    lines += ["", text, "", "means: " + "; ".join(means)]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", choices=["h2e", "how2review"], default="")
    ap.add_argument("--deluge-version", default=os.environ.get("H2E_LM_DELUGE", "0.0.168"))
    args = ap.parse_args()
    from tests.judging.support import judge_responder
    from tests.support.llm_server import LLMTestServer

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
    startup = None
    try:
        make_data(args.n)
        with (
            LLMTestServer(responder=judge_responder, latency_s=args.latency) as server,
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
            for r in range(1, args.rounds + 1):
                if args.only != "how2review":
                    rows.append(h2e_round(python, src, server, gens, tmp, r, args))
                    print(f"round {r} h2e: {rows[-1]}", flush=True)
                if args.only != "h2e":
                    rows.append(h2r_round(server, tmp, r, args))
                    print(f"round {r} how2review: {rows[-1]}", flush=True)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    text = report(rows, args, versions, startup)
    print(text)
    peers.OUT.mkdir(parents=True, exist_ok=True)
    (peers.OUT / "peers_judge.md").write_text(text + "\n")
    (peers.OUT / "peers_judge.json").write_text(
        json.dumps({"args": vars(args), "versions": versions, "rows": rows}, indent=2)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
