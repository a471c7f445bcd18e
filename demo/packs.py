"""The scorer packs' worked examples in the demo: each file of ``demo/fixtures/packs/`` (written
from the seed notes' worked examples) imported with ``import_pack`` as dataset ``<pack>-demo``
with the outputs of generator ``worked-examples``, then scored by a scoring run worked inline
(the same run type the console launches). Idempotent; a few hundred milliseconds."""

from __future__ import annotations

from pathlib import Path

from django.core.management import call_command

PACKS_DIR = Path(__file__).resolve().parent / "fixtures" / "packs"
DEMO_PACK_GENERATOR = "worked-examples"


def demo_packs_ensure(*, stdout) -> list[str]:
    """Import and score each pack's example file; returns one line per pack."""
    from benchmarks.models import Dataset, Generator, ScoringRun
    from benchmarks.services.scoring_runs import scoring_run_create
    from core.runs import engine

    lines = []
    for path in sorted(PACKS_DIR.glob("*.jsonl")):
        pack = path.stem
        dataset_name = f"{pack}-demo"
        call_command(
            "import_pack",
            pack,
            str(path),
            "--dataset",
            dataset_name,
            "--generator",
            DEMO_PACK_GENERATOR,
            stdout=stdout,
            verbosity=0,
        )
        dataset = Dataset.objects.get(name=dataset_name, version="v1")
        generator = Generator.objects.get(name=DEMO_PACK_GENERATOR)
        run = ScoringRun.objects.filter(
            pack=pack, dataset=dataset, generator=generator, status=ScoringRun.Status.DONE
        ).first()
        if run is None:
            run = engine.execute_inline(
                scoring_run_create(generator=generator, dataset=dataset, pack=pack, start=False)
            )
        lines.append(f"{pack}: {run.n_done}/{run.n_total} scored (scoring run {run.pk})")
    return lines
