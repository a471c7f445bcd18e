"""benchmarks 0008 links each generation to the generation run that asked for it (its tokens and
cost are then counted from its generations): generations made by a run's generator on its
dataset while it worked are linked; imported ones, other generators' and later ones are not.
The run rows' counters are left as they are."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.support.migrations import back_to_the_leaf, migrate_to  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("back_to_the_leaf")]

BEFORE = [("benchmarks", "0007_generation_outputs_and_scoring")]
AFTER = [("benchmarks", "0008_generation_run_link")]


_migrate = migrate_to


def test_generations_are_linked_to_the_run_that_made_them():
    old = _migrate(BEFORE)
    Dataset = old.get_model("benchmarks", "Dataset")
    Procedure = old.get_model("benchmarks", "Procedure")
    Generator = old.get_model("benchmarks", "Generator")
    Generation = old.get_model("benchmarks", "Generation")
    Run = old.get_model("benchmarks", "GenerationRun")
    ds, other_ds = Dataset.objects.create(name="d"), Dataset.objects.create(name="e")
    procs = [Procedure.objects.create(dataset=ds, source_example_id=f"p{i}") for i in range(4)]
    elsewhere = Procedure.objects.create(dataset=other_ds, source_example_id="x")
    gen, other_gen = Generator.objects.create(name="g"), Generator.objects.create(name="h")
    now = timezone.now()
    run = Run.objects.create(
        generator=gen,
        dataset=ds,
        model="m",
        status="done",
        prompt_tokens=30,
        cost=Decimal("0.5"),
        started_at=now - timedelta(hours=2),
        finished_at=now - timedelta(hours=1),
    )
    made = {
        "by-run-1": (procs[0], gen, now - timedelta(minutes=100)),
        "by-run-2": (procs[1], gen, now - timedelta(minutes=70)),
        "imported-before": (procs[2], gen, now - timedelta(hours=3)),
        "made-after": (procs[3], gen, now - timedelta(minutes=10)),
        "other-generator": (procs[0], other_gen, now - timedelta(minutes=90)),
        "other-dataset": (elsewhere, gen, now - timedelta(minutes=90)),
    }
    ids = {}
    for name, (proc, generator, at) in made.items():
        g = Generation.objects.create(procedure=proc, generator=generator, prompt_tokens=10)
        Generation.objects.filter(pk=g.pk).update(created_at=at)
        ids[name] = g.pk

    new = _migrate(AFTER)
    Generation = new.get_model("benchmarks", "Generation")
    linked = dict(Generation.objects.values_list("pk", "run_id"))
    assert {n for n, pk in ids.items() if linked[pk] == run.pk} == {"by-run-1", "by-run-2"}
    assert all(linked[ids[n]] is None for n in made if not n.startswith("by-run"))
    Run = new.get_model("benchmarks", "GenerationRun")
    assert (Run.objects.get().prompt_tokens, Run.objects.get().cost) == (30, Decimal("0.5"))

    _migrate(BEFORE)  # reversible
    _migrate(AFTER)
