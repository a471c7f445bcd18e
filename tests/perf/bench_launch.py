"""Judge-launch benchmark: what launching a judge run over a big selection costs, without the
judging. A launch is :func:`judging.services.runs.judge_run_create` (the selection validated, the
run row, its size counted) and :func:`~judging.services.runs.judge_run_prepare` (the worker's
first step: the generations selected, each item's content hashed, the items inserted), here both
in one process (``enqueue=False``, as ``--inline`` does). Two cases: a launch with the cost of
the estimate shown before it (the console) and one without (the API: the prepare step computes
a quick estimate, chars / 4 for tokens).

Run: ``.venv/bin/python tests/perf/bench_launch.py [--n 20000] [--rounds 3]``; compare two trees
by running this file from each, interleaved (A/B/A/B). Environment: ``DATABASE_URL`` (a scratch
database ``bench_h2r_launch`` is created and dropped; ``--db`` names another).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", default="bench_h2r_launch")
    args = parser.parse_args()
    os.environ["TEST_DATABASE_NAME"] = args.db

    import django

    django.setup()
    from django.db import connection

    from judging.models import JudgeRun, JudgeRunItem
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.perf._honest import Ledger
    from tests.perf.bench_judge_run import make_data

    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        make_data(args.n)
        from benchmarks.models import Dataset

        dataset = Dataset.objects.get(name="bench")
        judge = judge_services.judge_create(
            name="bench-launch", backend="openai", base_url="http://127.0.0.1:9/v1", model="m"
        )
        ledger, launched, stored = Ledger(f"launch of {args.n} items"), 0, 0
        times: dict[str, list[float]] = {"with_estimate": [], "without_estimate": []}
        cpu: dict[str, list[float]] = {"with_estimate": [], "without_estimate": []}
        for _ in range(args.rounds):
            for case, cost in (("with_estimate", Decimal("1.5")), ("without_estimate", None)):
                t0, c0 = time.perf_counter(), time.process_time()
                run = services.judge_run_create(
                    judge=judge,
                    selection={"dataset": dataset.pk},
                    enqueue=False,
                    estimated_cost=cost,
                )
                times[case].append(time.perf_counter() - t0)
                cpu[case].append(time.process_time() - c0)
                assert run.n_total == args.n and run.prepared_at is not None
                launched += args.n  # the selection's size: one run item each, stored
                stored += JudgeRunItem.objects.filter(run=run).count()
                JudgeRunItem.objects.filter(run=run).delete()
                JudgeRun.objects.filter(pk=run.pk).delete()
        load = os.getloadavg()
        for case, values in times.items():
            print(
                f"{case}: launch of {args.n} items median {statistics.median(values):.3f}s "
                f"(min {min(values):.3f}, max {max(values):.3f}, {len(values)} rounds); "
                f"this process's CPU median {statistics.median(cpu[case]):.3f}s"
            )
        print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        code = ledger.expect("run items", launched, before=0, after=stored).verdict()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
