"""Reward-service benchmark (seed 000 E.4): ``POST /api/reward/`` served by uvicorn (ASGI, one
worker process) on PostgreSQL, judging through the real ``openai`` client against the local
OpenAI-compatible test server answering every request after 200 ms (judge concurrency 64).
``--clients`` trainers post in a closed loop, each call a batch of B fresh completions (no cache
hits), for B = 8, 16, 32, 64.

Ideal: every call takes exactly the judge's latency (the judge answers all of a call's
completions in parallel, and the service adds nothing), so calls/s = clients / latency and
p95 = latency. Reported beside the measured calls/s, completions/s and p50/p95.

Every call must answer 200 with a verdict for each completion, and the judgments the server
stored must equal the completions sent (tests/perf/_honest.py); otherwise it exits 1.

Run: ``.venv/bin/python tests/perf/bench_reward.py [--clients 4] [--calls 12] [--latency 0.2]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review; a scratch
database ``bench_h2r_reward`` is created and dropped).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_reward"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from tests.perf._honest import Ledger  # noqa: E402

REF = [
    "Fill the kettle with fresh water and bring it to a boil.",
    "Place a paper filter in the dripper and rinse it with hot water.",
    "Add 20 grams of medium ground coffee to the filter.",
    "Pour 50 grams of water to bloom the grounds and wait 30 seconds.",
    "Pour the rest of the water slowly in circles until you reach 320 grams.",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def completion(tag: str) -> str:
    return "\n".join(f"{i + 1}. {s} ({tag})" for i, s in enumerate(REF))


def run_load(url: str, token: str, *, clients: int, calls: int, batch: int, tag: str) -> dict:
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    judged = [0]  # completions the service answered with a fresh verdict (one judgment each)
    lock = threading.Lock()

    def trainer(c: int) -> None:
        with httpx.Client(timeout=60) as client:
            for k in range(calls):
                items = [
                    {
                        "goal": "Brew pour-over coffee",
                        "resources": ["kettle", "dripper", "paper filter", "coffee"],
                        "reference_steps": REF,
                        "completion": completion(f"{tag}-{c}-{k}-{i}"),
                    }
                    for i in range(batch)
                ]
                t0 = time.perf_counter()
                r = client.post(
                    url,
                    json={"judge": "bench-judge", "items": items},
                    headers={"Authorization": f"Token {token}"},
                )
                dt = time.perf_counter() - t0
                with lock:
                    latencies.append(dt)
                    if r.status_code != 200:
                        errors.append(f"{r.status_code} {r.text[:200]}")
                        continue
                    body = r.json()
                    judged[0] += body.get("n_judged", 0)
                    errors.extend(
                        f"200 item {x['index']}: {x['error']}"
                        for x in body.get("results", [])
                        if x.get("error")
                    )

    threads = [threading.Thread(target=trainer, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = sorted(latencies)
    return {
        "calls_s": len(lat) / wall,
        "items_s": len(lat) * batch / wall,
        "p50_ms": 1000 * lat[len(lat) // 2],
        "p95_ms": 1000 * lat[int(0.95 * (len(lat) - 1))],
        "errors": errors,
        "judged": judged[0],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--calls", type=int, default=12, help="calls per client per batch size")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--batches", default="8,16,32,64")
    args = parser.parse_args()

    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from core.roles import role_assign
    from judging.services.judges import judge_create
    from tests.judging.support import judge_responder
    from tests.support.llm_server import LLMTestServer

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    db_name = connection.settings_dict["NAME"]
    server_proc = None
    try:
        with LLMTestServer(responder=judge_responder, latency_s=args.latency) as llm:
            judge_create(
                name="bench-judge",
                backend="openai",
                base_url=llm.base_url,
                model="m",
                concurrency=64,
                timeout_s=30,
            )
            user = User.objects.create_user("bench-trainer", password="x")
            role_assign(user=user, role="researcher")
            token = Token.objects.create(user=user).key
            port = free_port()
            env = {
                **os.environ,
                "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{db_name}",
                "DEBUG": "0",
            }
            server_proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "config.asgi:application",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--no-access-log",
                    "--log-level",
                    "warning",
                ],
                cwd=ROOT,
                env=env,
            )
            url = f"http://127.0.0.1:{port}/api/reward/"
            import httpx

            for _ in range(100):
                try:
                    httpx.post(url, json={}, timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            run_load(url, token, clients=1, calls=2, batch=4, tag="warm")
            ideal_calls = args.clients / args.latency
            print(
                f"reward service, uvicorn (1 ASGI worker), judge at {1000 * args.latency:.0f} ms, "
                f"{args.clients} closed-loop clients x {args.calls} calls per batch size; "
                f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
            )
            ok = True
            import psutil

            from judging.models import Judgment

            ledger = Ledger(f"reward, {args.clients} clients")
            judgments0, judged = Judgment.objects.count(), 0
            service = psutil.Process(server_proc.pid)
            for batch in (int(b) for b in args.batches.split(",")):
                cpu0 = sum(service.cpu_times()[:2])
                r = run_load(
                    url, token, clients=args.clients, calls=args.calls, batch=batch, tag=f"b{batch}"
                )
                ok &= not r["errors"]
                judged += r["judged"]
                for error in r["errors"]:
                    ledger.request(int(error.split()[0]), ok=False, detail=error)
                print(
                    f"  batch {batch:>2}: {r['calls_s']:.1f} calls/s = {r['items_s']:.0f} "
                    f"completions/s (ideal {ideal_calls:.1f} calls/s = "
                    f"{ideal_calls * batch:.0f}/s, {100 * r['calls_s'] / ideal_calls:.0f}% of it); "
                    f"p50 {r['p50_ms']:.0f} ms, p95 {r['p95_ms']:.0f} ms "
                    f"(ideal {1000 * args.latency:.0f} ms); service CPU "
                    f"{1000 * (sum(service.cpu_times()[:2]) - cpu0) / (args.clients * args.calls * batch):.2f}"
                    " ms per completion"
                    + (f"; {len(r['errors'])} errors: {r['errors'][0]}" if r["errors"] else "")
                )
            sent = args.clients * args.calls * sum(int(b) for b in args.batches.split(","))
            # every completion is fresh: one judgment stored per completion sent and judged
            ledger.expect("judgments", sent, before=judgments0, after=Judgment.objects.count())
            if judged != sent:
                ledger.refused(sent - judged, "completions the service did not judge")
            return 0 if ok and ledger.verdict() == 0 else 1
    finally:
        if server_proc is not None:
            server_proc.terminate()
            server_proc.wait(timeout=10)
        connection.close()
        connection.settings_dict["NAME"] = db_name
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
