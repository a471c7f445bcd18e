"""The study of bench_annotation.py (and of the benchmarks that use its harness: bench_memory.py,
bench_peers_annotation.py): migrated, seeded with procedures shaped like imported ones and a
study over their generations; and what the server stored for it, counted after a run."""

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
