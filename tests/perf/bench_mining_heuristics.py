"""Benchmark: the How2Mine heuristics filter (B.3) on one core. Target: >= 20,000 procedures/s.

Run: .venv/bin/python tests/perf/bench_mining_heuristics.py [N]
Procedures are synthetic but realistic: 3-18 steps of 6-20 words with punctuation, some
repetitive, so every branch (too few, too many, repetition, pass) is exercised.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mining.heuristics import apply_heuristics

_TEXT = (
    "preheat the oven to degrees mix flour water salt yeast in a large bowl knead dough for "
    "ten minutes until smooth cover and let rise shape loaf place on tray bake golden brown "
    "cool rack slice serve tighten loosen bolt wrench jack car tire remove mount spare check "
    "pressure"
)
WORDS = _TEXT.split()


def make(n: int, seed: int = 0) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(3, 18)
        if rng.random() < 0.1:
            steps = ["Stir the pot, then stir the pot again."] * k
        else:
            steps = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))).capitalize() + "."
                for _ in range(k)
            ]
        out.append(steps)
    return out


def main() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    procs = make(n)
    steps_total = sum(len(p) for p in procs)
    best_cpu = best_wall = float("inf")
    passed = 0
    for _ in range(5):
        c0, w0 = time.process_time(), time.perf_counter()
        passed = sum(apply_heuristics(p).passed for p in procs)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    rate = n / best_cpu
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"heuristics filter: {n} procedures ({steps_total / n:.1f} steps avg), {passed} passed")
    print(
        f"best of 5: {best_cpu:.3f} s CPU ({best_wall:.3f} s wall, load average {load:.1f}) -> "
        f"{rate:,.0f} procedures/s per core by CPU time, {n / best_wall:,.0f}/s by wall time (target >= 20,000)"
    )
    sys.exit(0 if rate >= 20_000 else 1)


if __name__ == "__main__":
    main()
