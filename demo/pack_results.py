"""The pack results pages' demo data: every file ``demo/fixtures/pack_results/<pack>-<generator>.jsonl``
(the pack is the longest registered pack name the file name starts with, e.g.
``longproc-countdown-gold-reference`` → pack ``longproc-countdown``, generator
``gold-reference``) imported into dataset ``<pack>-results-demo`` as that generator's outputs,
then scored by a scoring run worked inline. The lines are the seed notes' worked examples (each
names its source in a gold field ``worked_example``; the page marks them), and
``gold-reference`` copies the gold answer, so that two generators stand side by side.
Idempotent."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pack_results"
DESCRIPTIONS = {
    "paper-worked-examples": "The seed papers' worked examples (notes/other-seeds.md), not a "
    "model's outputs.",
    "gold-reference": "Copies each item's gold answer: a demo reference, not a model.",
}


def split_name(stem: str, packs: list[str]) -> tuple[str, str]:
    """(pack, generator) of a fixture's file name; ``ValueError`` when no pack matches."""
    for pack in sorted(packs, key=len, reverse=True):
        if stem.startswith(pack + "-") and len(stem) > len(pack) + 1:
            return pack, stem[len(pack) + 1 :]
    raise ValueError(f"{stem}.jsonl: the name must be <pack>-<generator> for a known pack")


def demo_pack_results_ensure(*, stdout=None) -> list[str]:
    """Import and score each fixture of a pack that has a results page (the others wait for
    theirs) once; one line per file."""
    from benchmarks.models import Dataset, Generator, ScoringRun
    from benchmarks.packs.registry import pack_names
    from benchmarks.services.pack_imports import pack_import
    from benchmarks.services.scoring_runs import scoring_run_create
    from core.runs import engine
    from judging.pack_results import PAGES

    packs = pack_names()
    lines = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        pack, generator_name = split_name(path.stem, packs)
        if not any(page.matches(pack) for page in PAGES.values()):
            continue
        dataset_name = f"{pack}-results-demo"
        pack_import(pack=pack, dataset=dataset_name, generator=generator_name, path=path)
        dataset = Dataset.objects.get(name=dataset_name, version="v1")
        generator = Generator.objects.get(name=generator_name)
        if not generator.description and generator_name in DESCRIPTIONS:
            generator.description = DESCRIPTIONS[generator_name]
            generator.save(update_fields=["description"])
        run = ScoringRun.objects.filter(
            pack=pack, dataset=dataset, generator=generator, status=ScoringRun.Status.DONE
        ).first()
        if run is None:
            run = engine.execute_inline(
                scoring_run_create(generator=generator, dataset=dataset, pack=pack, start=False)
            )
        lines.append(
            f"{pack} / {generator_name}: {run.n_done}/{run.n_total} scored (scoring run {run.pk})"
        )
    return lines
