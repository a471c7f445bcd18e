"""The study of bench_annotation.py (and of the benchmarks that use its harness: bench_memory.py,
bench_peers_annotation.py, bench_crowd.py, bench_million.py): migrated, seeded with procedures
shaped like imported ones and a study over their generations; the labels of a study that ran for
a while, written in bulk (bench_million.py); and what the server stored for it, counted after a
run."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.perf._annotation_server import ROOT, server_env

N_STEPS = 6


def seed(n_items: int, per_address: int = 0) -> str:
    """Migrate and create the study; returns its slug. ``per_address``: the study's limit of new
    participants per network address (0: none); every simulated annotator comes from 127.0.0.1,
    as a lab session behind one address does."""
    env = server_env()
    for command in (["migrate"], ["collectstatic"]):
        subprocess.run(
            [sys.executable, "manage.py", *command, "--noinput", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
    os.environ.update(env)
    import django

    django.setup()
    from annotation.services import study as study_services
    from benchmarks.models import Dataset, Generation, Generator, Procedure

    ds = Dataset.objects.create(name="bench-annotation", version="v1")
    gen = Generator.objects.create(name="bench-model")
    words = (
        "Measure the ingredients carefully and combine them in a clean bowl before heating gently"
    )
    source_text = " ".join([words] * 45)  # about 4 KB of mined web text per procedure
    completion = "\n".join(f"{s}. {words}." for s in range(1, N_STEPS + 1))
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"b-{i}",
                goal=f"Goal {i}: prepare a simple dish at home with basic tools.",
                resources=["bowl", "pan", "spoon", "stove"],
                steps=[f"{words} (reference step {s})." for s in range(1, N_STEPS + 1)],
                source_text=source_text,  # as imported procedures carry (2.5-6 KB)
            )
            for i in range(n_items)
        ]
    )
    gens = Generation.objects.bulk_create(
        [
            Generation(
                procedure=p,
                generator=gen,
                predicted_steps=[f"{words} (generated step {s})." for s in range(1, N_STEPS + 1)],
                model_completion=completion,
            )
            for p in procs
        ]
    )
    study = study_services.study_create(
        name="Load benchmark",
        generation_ids=[g.pk for g in gens],
        overlap=3,
        items_per_participant=100_000,
        min_seconds_per_item=0,
        attention_rate=0,
        prolific_study_id="BENCH",
        new_participants_per_address=per_address,
    )
    from django.db import connections

    from core.bulk_load import analyze_tables

    # the study's creation analyzed its items; the procedures and generations filled in bulk
    # above stand for an import's, analyzed as after any bulk load
    analyze_tables(Procedure, Generation)
    connections.close_all()
    return study.slug


def stored_counts(slug: str) -> dict[str, int]:
    """What the server stored for the study: participants and annotations (rows)."""
    from annotation.models import Annotation, Participant

    return {
        "participants": Participant.objects.filter(study__slug=slug).count(),
        "annotations": Annotation.objects.filter(participant__study__slug=slug).count(),
    }


LABELS_PER_PARTICIPANT = 100  # each seeded annotator labelled this many items of the study


def seed_labels(slug: str, n_labels: int, *, seed: int = 0) -> dict[str, int]:
    """Add ``n_labels`` stored annotations (rounded up to a multiple of k) to the study ``slug``
    (made by :func:`seed`), as a study that ran for a while holds them: ``ceil(n_labels / k)``
    more regular items, each fully labelled by k annotators (its procedure and generation shorter than :func:`seed`'s, 8
    generators, 20 topics), annotators who did :data:`LABELS_PER_PARTICIPANT` items each, and
    their submitted assignments and annotations (a hidden failure rate of 30% per item, each
    annotator agreeing with it 85% of the time). Written with PostgreSQL's ``COPY`` (text
    format, streamed; a million labels in about a minute), then the tables analyzed, as after
    any bulk load. The study's own free items are left for the item path. Returns the row
    counts written."""
    import json
    import random
    from datetime import UTC, datetime, timedelta

    from django.db import connection, transaction

    from annotation.models import Annotation, Assignment, Participant, Study, StudyItem
    from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
    from core.bulk_load import analyze_tables

    study = Study.objects.get(slug=slug)
    k = study.overlap
    n_items = -(-n_labels // k)
    per_group = -(-n_items // LABELS_PER_PARTICIPANT)  # annotators of each of the k "seats"
    rng = random.Random(seed)
    now = datetime.now(UTC)
    stamp = now.isoformat()
    words = "Whisk the eggs and fold them into the flour"
    steps = json.dumps([f"{words} ({s})." for s in range(1, N_STEPS + 1)])
    ds = Dataset.objects.create(name="bench-labels", version="v1")
    topics = Topic.objects.bulk_create(
        [Topic(slug=f"bench-topic-{t}", name=f"Bench topic {t}") for t in range(20)]
    )
    generators = Generator.objects.bulk_create(
        [Generator(name=f"bench-labelled-{g}") for g in range(8)]
    )

    def next_ids(model, n: int) -> int:
        """The first of ``n`` ids taken from ``model``'s sequence for rows written with ids."""
        table = model._meta.db_table
        with connection.cursor() as cur:
            cur.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
            seq = cur.fetchone()[0]
            cur.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")
            first = cur.fetchone()[0]
            cur.execute("SELECT setval(%s, %s)", [seq, first + n])
        return first

    def copy(model, columns: str, lines) -> int:
        """COPY the text-format ``lines`` (tab-separated, in ``columns`` order) into ``model``."""
        n = 0
        with (
            connection.cursor() as cur,
            cur.cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN") as out,
        ):
            buffer = []
            for line in lines:
                buffer.append(line)
                n += 1
                if len(buffer) == 20_000:
                    out.write("".join(buffer))
                    buffer.clear()
            out.write("".join(buffer))
        return n

    counts = {}
    with transaction.atomic():
        p0 = next_ids(Procedure, n_items)
        g0 = next_ids(Generation, n_items)
        i0 = next_ids(StudyItem, n_items)
        pt0 = next_ids(Participant, k * per_group)
        a0 = next_ids(Assignment, n_items * k)
        n0 = next_ids(Annotation, n_items * k)
        position0 = StudyItem.objects.filter(study=study).count()
        counts["procedures"] = copy(
            Procedure,
            "id, source_example_id, goal, resources, steps, url, source_text, created_at, "
            "dataset_id, topic_id, payload",
            (
                f"{p0 + i}\tl-{i}\tLabelled goal {i}: a dish at home.\t[]\t{steps}\t\t"
                f"{words}.\t{stamp}\t{ds.pk}\t{topics[i % 20].pk}\t{{}}\n"
                for i in range(n_items)
            ),
        )
        counts["generations"] = copy(
            Generation,
            "id, model_completion, predicted_steps, created_at, generator_id, procedure_id, "
            "scores, finish_reason, pack_scores, payload",
            (
                f"{g0 + i}\t{words}.\t{steps}\t{stamp}\t{generators[i % 8].pk}\t{p0 + i}\t"
                f"{{}}\tstop\t{{}}\t{{}}\n"
                for i in range(n_items)
            ),
        )
        counts["items"] = copy(
            StudyItem,
            "id, kind, position, explanation, n_assigned, generation_id, study_id, context, "
            "attempt, sample_rank",
            (
                f"{i0 + i}\tregular\t{position0 + i}\t\t{k}\t{g0 + i}\t{study.pk}\t{{}}\t1\t0\n"
                for i in range(n_items)
            ),
        )
        counts["participants"] = copy(
            Participant,
            "id, prolific_pid, prolific_session_id, stage, consented_at, attention_failures, "
            "n_done, n_attention_served, created_at, study_id, n_gold_served, "
            "qualification_attempt",
            (
                f"{pt0 + p}\tseeded{p:07d}\ts{p}\tworking\t{stamp}\t0\t"
                f"{LABELS_PER_PARTICIPANT}\t0\t{stamp}\t{study.pk}\t0\t1\n"
                for p in range(k * per_group)
            ),
        )

        def labels():
            """(assignment id, annotation id, participant id, item id, has failure, seconds
            ago) of each label, item by item."""
            n = 0
            for i in range(n_items):
                truth = rng.random() < 0.3
                for seat in range(k):
                    participant = pt0 + seat * per_group + i // LABELS_PER_PARTICIPANT
                    says = truth if rng.random() < 0.85 else not truth
                    yield a0 + n, n0 + n, participant, i0 + i, says, rng.randrange(86_400 * 30)
                    n += 1

        def when(ago: int) -> str:
            return (now - timedelta(seconds=ago)).isoformat()

        counts["assignments"] = copy(
            Assignment,
            "id, state, served_at, last_seen_at, active_ms, submitted_at, participant_id, item_id",
            (
                f"{a}\tsubmitted\t{when(ago + 60)}\t{when(ago)}\t45000\t{when(ago)}\t{p}\t{i}\n"
                for a, _, p, i, _, ago in labels()
            ),
        )
        rng.seed(seed)  # the same labels again, for their annotations
        failure = json.dumps(
            [{"description": "L2 step 2 contradicts the goal.", "l1_steps": [2], "l2_steps": [2]}]
        )
        counts["annotations"] = copy(
            Annotation,
            "id, has_failure, failures, comments, wall_ms, active_ms, interface_checks, "
            "submitted_at, assignment_id, participant_id, item_id, label",
            (
                f"{n}\t{'t' if says else 'f'}\t{failure if says else '[]'}\t\t60000\t45000\t{{}}\t"
                f"{when(ago)}\t{a}\t{p}\t{i}\t{{}}\n"
                for a, n, p, i, says, ago in labels()
            ),
        )
        analyze_tables(Procedure, Generation, StudyItem, Participant, Assignment, Annotation)
    return counts
