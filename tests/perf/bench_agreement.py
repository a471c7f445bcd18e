"""Benchmark: the agreement report for 7,000 items × 3 annotators, bootstrap included.

Run: ``.venv/bin/python tests/perf/bench_agreement.py``. Target: well under 1 s (the study
report page has 1 s in all). Prints the median and worst of several runs.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import numpy as np

from annotation.agreement_report import build_report
from annotation.label_file import LabelRow

N_ITEMS, ANNOTATORS, TOPICS, GENERATORS = 7000, ("a1", "a2", "a3"), 20, 8


def synthetic_rows(seed: int = 7) -> list[LabelRow]:
    """Three annotators who agree with a latent truth ~85% of the time; failures located on steps 1–12."""
    rng = np.random.default_rng(seed)
    truth = rng.random(N_ITEMS) < 0.45
    true_step = rng.integers(1, 13, N_ITEMS)
    rows = []
    for i in range(N_ITEMS):
        groups = {"topic": f"topic-{i % TOPICS}", "generator": f"gen-{i % GENERATORS}"}
        for a in ANNOTATORS:
            failure = bool(truth[i]) ^ bool(rng.random() < 0.15)
            step = None
            if failure:
                step = int(true_step[i]) if rng.random() < 0.6 else int(rng.integers(1, 13))
            label = "has_failure" if failure else "no_failure"
            rows.append(LabelRow(f"item-{i}", a, label, step, groups))
    return rows


def timed(rows, runs: int = 7, **kwargs) -> tuple[dict, list[float], list[float]]:
    wall, cpu = [], []
    report: dict = {}
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        report = build_report(rows, n_resamples=1000, seed=0, **kwargs)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return report, wall, cpu


def main() -> None:
    rows = synthetic_rows()
    print(
        f"agreement report, {N_ITEMS} items x {len(ANNOTATORS)} annotators, 1000 bootstrap resamples"
    )
    cases = [
        ("label alpha + CI, kappas, majority, leave-one-out", {}),
        ("+ first-failure alpha + CI", {"with_location": True}),
        (
            f"+ per-group alpha + CI ({TOPICS} topics, {GENERATORS} generators)",
            {"with_location": True, "group_columns": ("topic", "generator")},
        ),
    ]
    for name, kwargs in cases:
        report, wall, cpu = timed(rows, **kwargs)
        print(
            f"  {name}: median {np.median(wall) * 1000:.0f} ms wall "
            f"({np.median(cpu) * 1000:.0f} ms CPU), worst {max(wall) * 1000:.0f} ms"
        )
    alpha = report["alpha"]
    print(
        f"  alpha = {alpha['value']:.3f} [{alpha['ci']['low']:.3f}, {alpha['ci']['high']:.3f}], "
        f"first-failure alpha = {report['first_failure']['alpha']['value']:.3f}"
    )


if __name__ == "__main__":
    main()
