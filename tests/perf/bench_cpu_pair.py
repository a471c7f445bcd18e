"""Do this machine's two CPUs do two CPUs' work, and how steady is one? Times a fixed pure-Python
loop alone on CPU 0, alone on CPU 1, then two copies at once pinned to CPU 0 and CPU 1
(``taskset``), and prints each copy's CPU seconds and the wall time of the pair. Two copies as
fast as one alone: the CPUs are independent (not two hyperthreads of one core); the spread
between rounds is the machine's own noise, which every ratio in the performance docs sits on.

Run: ``python tests/perf/bench_cpu_pair.py [--rounds 2] [--n 30000000]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

LOOP = "import time\nt=time.process_time();s=0\nfor i in range({n}): s+=i\nprint(time.process_time()-t)"


def run(cpus: list[int], n: int) -> tuple[float, list[float]]:
    code = LOOP.format(n=n)
    procs = [
        subprocess.Popen(
            ["taskset", "-c", str(cpu), sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            text=True,
        )
        for cpu in cpus
    ]
    t0 = time.perf_counter()
    outs = [float(p.communicate()[0]) for p in procs]
    return time.perf_counter() - t0, outs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--n", type=int, default=30_000_000)
    args = ap.parse_args()
    for _ in range(args.rounds):
        a, b, both = run([0], args.n), run([1], args.n), run([0, 1], args.n)
        print(
            f"alone cpu0 {a[1][0]:.2f}s, cpu1 {b[1][0]:.2f}s; together {both[1][0]:.2f}s + "
            f"{both[1][1]:.2f}s, wall {both[0]:.2f}s; load {os.getloadavg()[0]:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
