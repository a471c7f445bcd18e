"""The judge transport alone: ``--n`` requests of a judge-sized prompt (~13,000 characters)
through the OpenAI-compatible backend (the openai client on its aiohttp transport, the request
loop a judge run uses) at ``--concurrency`` in flight, against the local test server answering
each after ``--latency`` s — no database, no writer, no run, client and server in this one
process. Its rate over the server's request window is the ceiling a judge run's own work
(prompt build, parse, store, backpressure) is compared with on the performance page.

Run: ``.venv/bin/python tests/perf/bench_judge_transport.py [--n 6000] [--concurrency 64]``.
Prints the rate and its share of the ideal (concurrency / latency); exits 1 when the server did
not receive exactly ``--n`` requests or any reply was an error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from benchmarks.llm.base import LLMRequest, LLMResponse  # noqa: E402
from benchmarks.llm.registry import build_backend  # noqa: E402
from tests.support.llm_server import LLMTestServer  # noqa: E402

PROMPT = ("Judge whether this procedure has a critical failure. " * 250)[:13_000]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=6000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    args = ap.parse_args()
    ideal = args.concurrency / args.latency
    with LLMTestServer(latency_s=args.latency) as server:
        server.responder = lambda req: '{"reasoning": "ok", "critical_failures": []}'
        backend = build_backend(
            {
                "backend": "openai",
                "base_url": server.base_url,
                "model": "transport",
                "concurrency": args.concurrency,
                "timeout_s": 30,
            }
        )
        requests = (
            LLMRequest(messages=[{"role": "user", "content": f"{PROMPT} {i}"}], max_tokens=100)
            for i in range(args.n)
        )
        errors = 0
        t0 = time.perf_counter()
        try:
            for _index, result in backend.complete_iter(requests):
                errors += not isinstance(result, LLMResponse)
        finally:
            backend.close()
        wall = time.perf_counter() - t0
        arrivals = sorted(r.received_at for r in server.requests)
    window = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else float("nan")
    rate = len(arrivals) / window
    ok = len(arrivals) == args.n and errors == 0
    print(
        f"transport: {'OK' if ok else 'FAIL'} {len(arrivals):,} requests received of {args.n:,}, "
        f"{errors} errors, at {args.concurrency} in flight: {args.n / wall:.1f}/s over the wall "
        f"({args.n / wall / ideal:.1%} of ideal), {rate:.1f}/s over the server's window "
        f"({rate / ideal:.1%}), load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
