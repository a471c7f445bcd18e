"""One and two real Celery workers on one run of each type (judge, generation, scoring runs,
mining batches) against the local OpenAI-compatible server, which counts the requests it holds
at once: the peak in flight (≤ the backend's ``concurrency``, the endpoint's limit across
workers), the wall time, duplicates and requests asked twice, and the chunks each worker took.

Two settings (``--mode``):

- ``latency``: the cap binds (``--concurrency 4``, replies after ``--latency`` 0.1 s): two
  workers each work part of the run and it is not slower than on one;
- ``cpu``: a high cap (64), replies at once, each worker pinned to its own core
  (``os.sched_setaffinity`` on the worker and its pool processes, like ``taskset``): two
  workers against one (target ≥ 1.6×; on a machine whose two cores are shared by other work,
  the load is printed beside it).

Run: ``.venv/bin/python tests/perf/bench_lanes_every_run_type.py [--mode latency|cpu|both]
[--types judge,generation,scoring,mining] [--n 400] [--repeat 3] [--timeline]``: ``--repeat``
interleaves rounds of one and two workers and prints medians; ``--timeline`` prints, per round,
where the slots were idle (before the first request, below the cap in the steady part, after the
last reply, each lane's first and last request for mining) and the gate's Redis round trips per
request (:mod:`tests.perf._timeline`, through ``MONITOR``: it costs Redis CPU, counted in "rest"). Each row also prints the CPU seconds of the
workers and of the rest (this process, which runs the test server, plus PostgreSQL and Redis):
on two cores that also run the rest, two pinned workers can be at most ``2w / (w + r)`` times
one (w, r: the workers' and the rest's CPU per item), printed as "two cores allow at most". A scratch database ``bench_h2r_lanes``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# items per judge-run chunk (--judge-chunk-items): 100 hands over often; the product's default
# is 20,000 (judging.services.execution.CHUNK_ITEMS), one chunk per lane for these runs
JUDGE_CHUNK_ITEMS = [100]
# workers load the LLM client and token counter when they start (settings.WORKER_WARM_UP), as a
# long-lived worker has after its first chunk; --cold: on their first chunk, inside the run
WARM_UP = ["1"]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_lanes"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from tests.perf._cpu import process_cpu  # noqa: E402

PACKS = ROOT / "demo" / "fixtures" / "packs"
# one folder for every setting: the storage keeps the MEDIA_ROOT it was first used with
VAR_DIR = tempfile.mkdtemp(prefix="bench-lanes-")


def services_cpu() -> float:
    """CPU seconds of PostgreSQL and Redis so far (every process of theirs on the machine)."""
    import psutil

    total = 0.0
    for p in psutil.process_iter(["name", "cpu_times"]):
        if p.info["name"] in ("postgres", "redis-server") and p.info["cpu_times"]:
            total += p.info["cpu_times"].user + p.info["cpu_times"].system
    return total


def pin(worker, core: int) -> None:
    """The worker and its pool processes on one core (what ``taskset -c`` does)."""
    import psutil

    proc = psutil.Process(worker.proc.pid)
    for p in [proc, *proc.children(recursive=True)]:
        os.sched_setaffinity(p.pid, {core})


# --- one run of each type: (launch, finished?, exactly-once check) ------------------------


def judge_case(server, n, concurrency, tag):
    from judging.models import JudgeRun, JudgeRunItem, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.judging.factories import make_data

    data = make_data(n=n, dataset=tag, generators=(f"{tag}-gen",))
    judge = judge_services.judge_create(
        name=f"lanes-{tag}", backend="openai", base_url=server.base_url, model="m",
        concurrency=concurrency, timeout_s=30,
    )  # fmt: skip

    def launch():
        return services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})

    def duplicates(run):
        items = JudgeRunItem.objects.filter(run=run, judgment__isnull=False)
        return (
            items.count()
            - items.values("judgment").distinct().count()
            + (Judgment.objects.filter(judge=judge).count() - n)
        )

    def endpoint(run):
        return judge.backend_config()

    return launch, JudgeRun, duplicates, n, endpoint


def generation_case(server, n, concurrency, tag):
    from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure
    from benchmarks.services.generation_runs import generation_run_create

    dataset = Dataset.objects.create(name=tag, version="v1")
    Procedure.objects.bulk_create(
        Procedure(dataset=dataset, source_example_id=f"{tag}-{i}", goal=f"Goal {i}",
                  steps=["a.", "b."])
        for i in range(n)
    )  # fmt: skip
    generator = Generator.objects.create(name=tag)

    def launch():
        return generation_run_create(
            generator=generator, dataset=dataset, model="m", base_url=server.base_url,
            chunk_size=50, concurrency=concurrency, backend_options={"timeout_s": 30},
        )  # fmt: skip

    def duplicates(run):
        per = Counter(
            Generation.objects.filter(generator=generator).values_list("procedure", flat=True)
        )
        return sum(c - 1 for c in per.values()) + (n - len(per))

    def endpoint(run):
        from benchmarks.services.generation_requests import generation_run_backend_config

        return generation_run_backend_config(run=run)

    return launch, GenerationRun, duplicates, n, endpoint


def scoring_case(server, n, concurrency, tag):
    from django.core.management import call_command

    from benchmarks.models import Dataset, Generation, Generator, ScoringRun
    from benchmarks.services.scoring_runs import scoring_run_create

    call_command(
        "import_pack", "longproc-countdown", str(PACKS / "longproc-countdown.jsonl"),
        "--dataset", tag, "--generator", tag, stdout=io.StringIO(),
    )  # fmt: skip
    dataset, generator = Dataset.objects.get(name=tag), Generator.objects.get(name=tag)
    originals = list(Generation.objects.filter(generator=generator).select_related("procedure"))
    ids = [g.procedure.source_example_id for g in originals]
    for k in range(1, max(1, n // len(originals))):
        for g, ident in zip(originals, ids, strict=True):
            p = g.procedure
            p.pk, p.source_example_id = None, f"{ident}-{k}"
            p.save()
            g.pk, g.procedure = None, p
            g.save()
    total = Generation.objects.filter(generator=generator).count()

    def launch():
        return scoring_run_create(
            generator=generator, dataset=dataset, pack="longproc-countdown", chunk_size=50
        )

    def duplicates(run):
        scored = Generation.objects.filter(
            generator=generator, pack_scores__has_key="longproc-countdown"
        ).count()
        return total - scored

    return launch, ScoringRun, duplicates, 0, None  # a scoring run calls no model


def mining_case(server, n, concurrency, tag):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from mining.models import MiningBatch, MiningDocument
    from mining.services import batches as mining
    from tests.mining.factories import doc

    backends = {
        "default": {"backend": "openai", "base_url": server.base_url, "model": "m",
                    "concurrency": concurrency, "timeout_s": 30}
    }  # fmt: skip
    docs = n // 5  # five LLM stages a document

    def launch():
        upload = SimpleUploadedFile(
            f"{tag}.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(docs)).encode()
        )
        return mining.batch_create(
            name=tag, upload=upload, backends=backends, options={"chunk_size": 32}
        )

    def duplicates(run):
        return MiningDocument.objects.filter(batch=run, outcome="pending").count()

    def endpoint(run):
        return backends["default"]

    # requests: counted per stage, not per doc
    return launch, MiningBatch, duplicates, None, endpoint


CASES = {
    "judge": judge_case,
    "generation": generation_case,
    "scoring": scoring_case,
    "mining": mining_case,
}


def _doc_tag(req) -> str:
    """A mining request's document (``Recipe <i>`` is in every stage's prompt), a generation
    request's procedure (``Goal <i>``)."""
    import re

    m = re.search(r"Recipe (\d+)|Goal (\d+)\b", req.prompt_text)
    return f"d{m.group(1)}" if m and m.group(1) else (f"p{m.group(2)}" if m else "")


def _lane_of(kind, run, n_lanes):
    """tag -> lane (documents' ids mod the lanes), or None when not known."""
    if kind == "generation":
        from benchmarks.models import Procedure

        rows = Procedure.objects.filter(dataset=run.dataset).values_list("source_example_id", "pk")
        lanes = {f"p{source.rsplit('-', 1)[-1]}": pk % n_lanes for source, pk in rows}
        return lambda tag: lanes.get(tag, "?")
    if kind != "mining":
        return None
    from mining.models import MiningDocument

    rows = MiningDocument.objects.filter(batch=run).values_list("source_id", "pk")
    lanes = {source: pk % n_lanes for source, pk in rows}
    return lambda tag: lanes.get(tag, "?")


def _trace(kind, run, endpoint, timeline, calls, *, concurrency, t0, t1) -> dict:
    """The --timeline figures: where slots were idle, gate round trips per request."""
    from benchmarks.llm.registry import build_backend
    from tests.perf._timeline import summary

    out = summary(
        timeline.events, cap=concurrency, launched=t0, done=t1, lane_of=_lane_of(kind, run, 4)
    )
    if endpoint is not None:
        backend = build_backend(endpoint(run))
        out["gate_calls"] = dict(calls.count(backend.endpoint_key()))
        backend.close()
    return out


def settle(workers, *, timeout: float = 30.0) -> None:
    """Until the workers' processes are idle (their pool processes' warm-up done: its CPU is
    not the run's)."""
    last, deadline = -1.0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = sum(process_cpu(w.proc.pid) for w in workers)
        if now - last < 0.02:
            return
        last = now
        time.sleep(0.3)


def one_setting(*, kind, workers, n, latency, concurrency, pinned, timeline=False):
    from django.conf import settings

    from tests.judging.support import judge_responder
    from tests.mining.script import MiningScript
    from tests.support.inflight import InFlight
    from tests.support.llm_server import LLMTestServer
    from tests.support.worker import start_worker

    settings.JUDGE_RUN_LANES = settings.RUN_LANES = 4
    settings.MEDIA_ROOT = Path(VAR_DIR) / "media"  # the workers' too (uploads)
    var_dir = VAR_DIR
    tag = f"{kind}-w{workers}-c{concurrency}-{int(time.time() * 1000) % 10**8}"
    if kind == "generation":
        from tests.benchmarks.generation.conftest import steps_responder as reply
    elif kind == "mining":
        reply = MiningScript()
    else:
        reply = judge_responder
    counter = InFlight(reply=reply, latency_s=latency)
    responder = counter
    if timeline:
        from tests.perf._timeline import GateCalls, Timeline

        responder = Timeline(counter, tag=_doc_tag if kind in ("mining", "generation") else None)
    env = {
        "H2R_JUDGE_CHUNK_ITEMS": str(JUDGE_CHUNK_ITEMS[0]),
        "RUN_CHUNK_SECONDS": "20",
        "H2R_WORKER_WARM_UP": WARM_UP[0],
        "HOW2REVIEW_VAR_DIR": var_dir,
    }
    with (
        LLMTestServer(responder=responder) as server,
        tempfile.TemporaryDirectory() as tmp,
        ExitStack() as stack,
    ):
        launch, model, duplicates, asked, endpoint = CASES[kind](server, n, concurrency, tag)
        started = []
        for k in range(workers):
            (Path(tmp) / str(k)).mkdir()
            queue = started[0].queue if started else None
            w = start_worker(Path(tmp) / str(k), concurrency=1, extra_env=env, queue=queue)
            stack.callback(w.stop)
            if pinned:
                pin(w, k % (os.cpu_count() or 1))
            started.append(w)
        settle(started)
        load = os.getloadavg()[0]
        cpu0 = (sum(process_cpu(w.proc.pid) for w in started), time.process_time(), services_cpu())
        calls = stack.enter_context(GateCalls(settings.RATE_LIMIT_REDIS_URL)) if timeline else None
        t0 = time.perf_counter()
        m0 = time.monotonic()
        run = launch()
        while model.objects.filter(pk=run.pk, status__in=("queued", "running")).exists():
            time.sleep(0.05)
        elapsed = time.perf_counter() - t0
        m1 = time.monotonic()
        if calls is not None:
            calls.__exit__(None, None, None)
        cpu1 = (sum(process_cpu(w.proc.pid) for w in started), time.process_time(), services_cpu())
        # the workers' CPU, and the rest's: this process (the test server's threads, the launch)
        # plus PostgreSQL and Redis, all on the same cores
        worker_cpu, rest_cpu = cpu1[0] - cpu0[0], (cpu1[1] - cpu0[1]) + (cpu1[2] - cpu0[2])
        run.refresh_from_db()
        requests = len(server.requests)
        prompts = Counter(
            r.prompt_text + json.dumps(r.body.get("response_format")) for r in server.requests
        )
        return {
            "status": run.status,
            "elapsed": elapsed,
            "peak": counter.peak,
            "requests": requests,
            "asked_twice": sum(c - 1 for c in prompts.values()),
            "rebought": (requests - asked) if asked else sum(c - 1 for c in prompts.values()),
            "duplicates": duplicates(run),
            "chunks": [w.log().count("succeeded in") for w in started],
            "load": load,
            "worker_cpu": worker_cpu,
            "rest_cpu": rest_cpu,
            "trace": _trace(
                kind, run, endpoint, responder, calls, concurrency=concurrency, t0=m0, t1=m1
            )
            if timeline
            else None,
        }


def _fmt(trace: dict, requests: int) -> str:
    calls = trace.pop("gate_calls", {})
    total = sum(calls.values())
    parts = [f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in trace.items()]
    if calls:
        per = ", ".join(f"{k} {v / max(requests, 1):.2f}" for k, v in sorted(calls.items()))
        parts.append(f"gate Redis commands per request {total / max(requests, 1):.2f} ({per})")
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="both", choices=("latency", "cpu", "both"))
    parser.add_argument("--types", default="judge,generation,scoring,mining")
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--judge-chunk-items", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of (one worker, two workers), interleaved"
    )
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="print where slots were idle (start, steady, end, per lane) and the gate's Redis "
        "commands per request (MONITOR)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="workers load the LLM client and token counter on their first chunk (inside the "
        "measured run; ~0.9 s of CPU each) instead of when they start (H2R_WORKER_WARM_UP)",
    )
    args = parser.parse_args()
    JUDGE_CHUNK_ITEMS[0] = args.judge_chunk_items
    WARM_UP[0] = "0" if args.cold else "1"
    modes = ("latency", "cpu") if args.mode == "both" else (args.mode,)
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    bad = 0
    try:
        for mode in modes:
            concurrency, latency = (4, args.latency) if mode == "latency" else (64, 0.0)
            for kind in args.types.split(","):
                rows: dict[int, list[dict]] = {1: [], 2: []}
                for _ in range(args.repeat):
                    for workers in (1, 2):
                        r = one_setting(
                            kind=kind, workers=workers, n=args.n, latency=latency,
                            concurrency=concurrency, pinned=mode == "cpu", timeline=args.timeline,
                        )  # fmt: skip
                        rows[workers].append(r)
                        print(
                            f"[{mode}] {kind}: {workers} worker(s), concurrency {concurrency}: "
                            f"{r['status']} in {r['elapsed']:.2f}s, peak in flight {r['peak']}, "
                            f"requests {r['requests']}, asked twice {r['asked_twice']}, "
                            f"duplicates {r['duplicates']}, chunks per worker {r['chunks']}, "
                            f"CPU s workers {r['worker_cpu']:.2f} / rest {r['rest_cpu']:.2f}, "
                            f"load {r['load']:.1f}",
                            flush=True,
                        )
                        if r["trace"]:
                            print(f"    timeline: {_fmt(r['trace'], r['requests'])}", flush=True)
                        bad += int(r["status"] != "done" or r["duplicates"] or r["asked_twice"])
                        bad += int(mode == "latency" and r["peak"] > concurrency)
                one, two = (statistics.median(r["elapsed"] for r in rows[k]) for k in (1, 2))
                # CPU-bound on a machine whose cores also run the server and the database: with
                # w the workers' CPU and r the rest's per item, one pinned worker takes N*w
                # (the rest on the other core), two take N*(w+r)/2 at best: 2w/(w+r)
                w = statistics.median(r["worker_cpu"] for r in rows[1])
                rest = statistics.median(r["rest_cpu"] for r in rows[1])
                bound = 2 * w / (w + rest) if w + rest else 0.0
                print(
                    f"[{mode}] {kind}: two workers / one = {one / two:.2f}x (median of "
                    f"{args.repeat}: {one:.2f}s / {two:.2f}s); CPU per item workers "
                    f"{1000 * w / args.n:.2f} ms, rest {1000 * rest / args.n:.2f} ms; "
                    f"two cores allow at most {bound:.2f}x",
                    flush=True,
                )
        return int(bad > 0)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
