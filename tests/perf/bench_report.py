"""Benchmark: the study agreement report page for 7,000 items × 3 annotators on PostgreSQL.

Builds the study by bulk-creating rows (14 topics, 3 generators, every item labelled by the
same 3 annotators, ~40% failures with linked steps, planted attention results), then times
through the Django test client:

- the full report page with an empty cache (what the first view after a new label costs:
  every statistic, 1,000-resample bootstrap CIs for α, location α and every topic/generator);
- the same page with the report cached (repeat views and the 10 s htmx poll);
- the htmx partial answering 204 when nothing changed;
- the adjudication queue page and the per-item label CSV export.

Target: the full report page under 1 s. Prints the median and worst of several runs.

Run: ``.venv/bin/python tests/perf/bench_report.py [--items 7000] [--runs 5]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review); a scratch
database ``bench_h2r_report`` is created and dropped.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_report"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402 - the environment above must be set before Django loads

django.setup()

from django.db import connection  # noqa: E402

TARGET_S = 1.0
ANNOTATORS = ("PID_A", "PID_B", "PID_C")


def make_study(n_items: int):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import (
        Annotation,
        Assignment,
        AttentionCheckResult,
        Participant,
        Study,
        StudyItem,
    )
    from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic

    rng = random.Random(7)
    topics = list(Topic.objects.all()[:14]) or [
        Topic.objects.create(slug=f"t{i}", name=f"Topic {i}", position=i) for i in range(14)
    ]
    ds = Dataset.objects.create(name="bench-report", version="v1")
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"doc-{i:06d}",
                topic=topics[i % len(topics)],
                goal=f"Goal {i}",
                steps=[f"Reference step {s}" for s in range(1, 11)],
            )
            for i in range(n_items)
        ],
        batch_size=2000,
    )
    generators = [Generator.objects.create(name=f"bench-gen-{g}") for g in range(3)]
    gens = Generation.objects.bulk_create(
        [
            Generation(
                procedure=p,
                generator=generators[i % 3],
                predicted_steps=[f"Generated step {s}" for s in range(1, 11)],
            )
            for i, p in enumerate(procs)
        ],
        batch_size=2000,
    )
    study = Study.objects.create(name="bench report", overlap=3, items_per_participant=n_items)
    items = StudyItem.objects.bulk_create(
        [
            StudyItem(study=study, generation=g, kind="regular", position=i, n_assigned=3)
            for i, g in enumerate(gens)
        ],
        batch_size=2000,
    )
    participants = [
        Participant.objects.create(study=study, prolific_pid=pid, stage="done", n_done=n_items)
        for pid in ANNOTATORS
    ]
    now = timezone.now()
    for p in participants:
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    participant=p,
                    item=item,
                    state="submitted",
                    served_at=now - timedelta(minutes=5),
                    last_seen_at=now,
                    submitted_at=now,
                    active_ms=rng.randint(60_000, 240_000),
                )
                for item in items
            ],
            batch_size=2000,
        )
        rows = []
        for a in assignments:
            failure = (a.item.position % 5 < 2) ^ (rng.random() < 0.15)
            step = rng.randint(1, 10)
            rows.append(
                Annotation(
                    assignment=a,
                    participant=p,
                    item=a.item,
                    has_failure=failure,
                    failures=[
                        {
                            "description": "Step skips a needed action.",
                            "l1_steps": [step],
                            "l2_steps": [step],
                        }
                    ]
                    if failure
                    else [],
                    comments="",
                    wall_ms=a.active_ms + 5_000,
                    active_ms=a.active_ms,
                    submitted_at=now,
                )
            )
        Annotation.objects.bulk_create(rows, batch_size=2000)
        AttentionCheckResult.objects.bulk_create(
            [
                AttentionCheckResult(participant=p, kind="planted", passed=rng.random() < 0.9)
                for _ in range(n_items // 10)
            ]
        )
    return study


def timed(fn, runs: int) -> tuple[float, float, float]:
    """Median wall, worst wall, median CPU of this process (the database's CPU not included)."""
    times, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(times), max(times), statistics.median(cpu)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=7000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        from django.contrib.auth.models import User
        from django.core.cache import cache
        from django.test import Client
        from django.test.utils import override_settings, setup_test_environment
        from django.urls import reverse

        from annotation.selectors import report as rs
        from core.roles import role_assign

        setup_test_environment()
        t0 = time.perf_counter()
        study = make_study(args.items)
        print(
            f"built a study of {args.items} items x {len(ANNOTATORS)} annotators "
            f"in {time.perf_counter() - t0:.1f} s (PostgreSQL)"
        )
        user = User.objects.create_user("bench-researcher")
        role_assign(user=user, role="researcher")
        client = Client()
        client.force_login(user)
        with override_settings(ROOT_URLCONF="tests.annotation.report.urls"):
            page = reverse("annotation:report", args=[study.pk])
            partial = reverse("annotation:report_partial", args=[study.pk])
            queue = reverse("annotation:queue", args=[study.pk])
            export = reverse("annotation:labels_export", args=[study.pk, "csv"])

            def cold():
                cache.clear()
                r = client.get(page)
                assert r.status_code == 200 and b"Krippendorff" in r.content

            def warm():
                r = client.get(page)
                assert r.status_code == 200

            signature = rs.report_signature(study=study)

            def poll():
                assert client.get(partial, {"since": signature}).status_code == 204

            def queue_page():
                assert client.get(queue).status_code == 200

            def csv_export():
                r = client.get(export)
                assert sum(len(c) for c in r.streaming_content) > 0

            cold()  # warm up imports and connections
            report = rs.study_report(study=study)
            print(
                f"alpha = {report['alpha']['value']:.3f}, first-failure alpha = "
                f"{report['first_failure']['alpha']['value']:.3f}, "
                f"{len(report['groups']['topic'])} topics, {len(report['groups']['generator'])} generators"
            )
            results = [
                (
                    "full report page, empty cache (all stats + bootstrap CIs)",
                    timed(cold, args.runs),
                ),
                ("full report page, cached report", timed(warm, args.runs)),
                ("htmx poll, nothing new (204)", timed(poll, args.runs)),
                ("adjudication queue page", timed(queue_page, args.runs)),
                ("per-item labels CSV export", timed(csv_export, args.runs)),
            ]
        for name, (median, worst, cpu) in results:
            print(
                f"  {name}: median {median * 1000:.0f} ms, worst {worst * 1000:.0f} ms "
                f"({cpu * 1000:.0f} ms CPU)"
            )
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        cold_median = results[0][1][0]
        ok = cold_median < TARGET_S
        print(f"target: full report page under {TARGET_S:.0f} s -> {'OK' if ok else 'MISSED'}")
        return 0 if ok else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    raise SystemExit(main())
