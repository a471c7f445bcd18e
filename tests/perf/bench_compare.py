"""Comparison benchmark: the numbers behind the comparison pages at the paper's scale.

Data: 7,000 procedures × ``--generators`` generators (default 3), each generation judged by
``--judges`` judges (default 3: 63,000 judgments), token counts stored on two generators and
counted on the fly (o200k) for the rest, and a 200-item study labelled by 3 annotators.
Times (median of 3) ``study_comparison``, ``judge_pair_comparison`` (all content),
``generator_rankings`` and ``judge_leaderboard`` (with the study), plus ``distill_export``
of two 7,000-item runs. Target: each page's numbers in under 2 s.

Run: ``.venv/bin/python tests/perf/bench_compare.py [--procedures 7000] [--generators 3] [--judges 3]``
Environment: ``DATABASE_URL`` (default postgres://postgres@127.0.0.1:5432/how2review; a scratch
database ``bench_h2r_compare`` is created and dropped).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/how2review")
os.environ["TEST_DATABASE_NAME"] = "bench_h2r_compare"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402 - the environment above must be set before Django loads

django.setup()

from django.db import connection  # noqa: E402

TARGET_S = 2.0
WORDS = (  # noqa: SIM905 (a readable sentence, split once)
    "remove the cover carefully and place screws in a small bowl so none are lost while you work on the "
    "panel then loosen bolt tighten clockwise measure twice cut once mix flour water salt yeast knead dough "
    "for ten minutes until smooth preheat oven check temperature wipe surface apply thin layer"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n)).capitalize() + "."


def make_data(*, n_procedures: int, n_generators: int, n_judges: int) -> dict:
    from django.utils import timezone

    from annotation.models import Annotation, Assignment, Participant, Study, StudyItem
    from benchmarks.models import Dataset, Generation, Generator, Procedure
    from benchmarks.tokens import count_steps_tokens
    from judging import prompting
    from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment

    rng = random.Random(7)
    ds = Dataset.objects.create(name="bench", version="v1")
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"doc-{i:06d}",
                goal=sentence(rng, 14),
                steps=[sentence(rng, rng.randint(15, 25)) for _ in range(rng.randint(8, 12))],
            )
            for i in range(n_procedures)
        ],
        batch_size=2000,
    )
    gens = []
    for g in range(n_generators):
        gen = Generator.objects.create(name=f"gen-{g}")
        with_scores = g < 2
        batch = []
        for p in procs:
            steps = [sentence(rng, rng.randint(12, 26)) for _ in p.steps]
            scores = (
                {"gen_tokens": count_steps_tokens(steps), "ref_tokens": count_steps_tokens(p.steps)}
                if with_scores
                else {}
            )
            batch.append(
                Generation(procedure=p, generator=gen, predicted_steps=steps, scores=scores)
            )
        gens += Generation.objects.bulk_create(batch, batch_size=2000)
    judges = []
    now = timezone.now()
    quality = [0.3 + 0.1 * g for g in range(n_generators)]
    for j in range(n_judges):
        judge = Judge(name=f"judge-{j}", model="teacher", decoding={"temperature": 1.0, "seed": j})
        judge.save()
        judges.append(judge)
        run = JudgeRun.objects.create(
            judge=judge,
            status=JudgeRun.Status.DONE,
            n_total=len(gens),
            started_at=now,
            finished_at=now,
            cost="1.5",
        )
        judgments, items = [], []
        for k, g in enumerate(gens):
            h = prompting.content_hash(
                goal=g.procedure.goal, reference_steps=g.procedure.steps, steps=g.predicted_steps
            )
            parse_failed = rng.random() < 0.01
            fail = rng.random() > quality[k // n_procedures] + 0.05 * j
            judgments.append(
                Judgment(
                    judge=judge,
                    judge_key=judge.judge_id,
                    content_hash=h,
                    source_example_id=g.procedure.source_example_id,
                    reasoning="The candidate omits a step." if fail else "Fine.",
                    has_failure=fail and not parse_failed,
                    n_failures=int(fail),
                    parse_failed=parse_failed,
                    critical_failures=[{"failure": "omits", "L1_steps": [2], "L2_steps": [2]}]
                    if fail
                    else [],
                )
            )
            items.append((g, h))
        stored = Judgment.objects.bulk_create(judgments, batch_size=5000)
        JudgeRunItem.objects.bulk_create(
            [
                JudgeRunItem(run=run, generation=g, content_hash=h, judgment=s)
                for (g, h), s in zip(items, stored, strict=True)
            ],
            batch_size=5000,
        )
    study = Study.objects.create(name="bench study", overlap=3)
    sitems = StudyItem.objects.bulk_create(
        [
            StudyItem(study=study, generation=g, position=i)
            for i, g in enumerate(rng.sample(gens, 200))
        ]
    )
    for a in range(3):
        p = Participant.objects.create(
            study=study, prolific_pid=f"P{a}", stage=Participant.Stage.DONE
        )
        asg = Assignment.objects.bulk_create(
            [
                Assignment(
                    participant=p,
                    item=it,
                    state=Assignment.State.SUBMITTED,
                    served_at=now,
                    last_seen_at=now,
                    submitted_at=now,
                )
                for it in sitems
            ]
        )
        Annotation.objects.bulk_create(
            [
                Annotation(
                    assignment=x,
                    participant=p,
                    item=x.item,
                    has_failure=rng.random() < 0.5,
                    wall_ms=1,
                    active_ms=1,
                    submitted_at=now,
                )
                for x in asg
            ]
        )
    return {"judges": judges, "study": study}


def timed(fn, runs: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--procedures", type=int, default=7000)
    parser.add_argument("--generators", type=int, default=3)
    parser.add_argument("--judges", type=int, default=3)
    args = parser.parse_args()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        from judging.leaderboard.reads import judge_leaderboard
        from judging.models import JudgeRun
        from judging.services.distillation import distill_export
        from validation.comparisons.reads import (
            generator_rankings,
            judge_pair_comparison,
            study_comparison,
        )

        t0 = time.perf_counter()
        data = make_data(
            n_procedures=args.procedures, n_generators=args.generators, n_judges=args.judges
        )
        n_judgments = args.procedures * args.generators * args.judges
        print(
            f"data: {args.procedures} procedures x {args.generators} generators, {args.judges} judges "
            f"({n_judgments} judgments), 200-item study x 3 annotators in {time.perf_counter() - t0:.1f}s"
        )
        judges, study = data["judges"], data["study"]
        ok = True
        cases = [
            (
                "study comparison (200 items)",
                lambda: study_comparison(study=study, judges=judges),
            ),
            ("judge-judge pairs (all content)", lambda: judge_pair_comparison(judges=judges)),
            ("generator rankings + Kendall tau", lambda: generator_rankings(judges=judges)),
            (
                "judge leaderboard (with study)",
                lambda: judge_leaderboard(judges=judges, study=study),
            ),
        ]
        for name, fn in cases:
            seconds, _ = timed(fn)
            ok &= seconds < TARGET_S
            print(
                f"{name:<36} {seconds * 1000:8.1f} ms  {'PASS' if seconds < TARGET_S else 'FAIL'} (< {TARGET_S:.0f} s)"
            )
        runs = list(JudgeRun.objects.filter(judge__in=judges[:2]).order_by("judge__name"))
        with tempfile.TemporaryDirectory() as tmp:
            seconds, report = timed(
                lambda: distill_export(
                    teacher=judges[0], run_ids=[r.pk for r in runs], path=Path(tmp) / "sft.jsonl"
                ),
                runs=1,
            )
        r = report.to_json()
        print(
            f"{'distill export (2 runs)':<36} {seconds * 1000:8.1f} ms  kept {r['n_kept']} of {r['n_items']}, "
            f"dropped {r['dropped']}"
        )
        return 0 if ok else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    raise SystemExit(main())
