"""Create an annotation study over one generator's generations on a dataset.

    manage.py create_study --name "Pilot" --dataset how2bench@v1 --generator gpt-4.1 --limit 200 \
        [--known-items known.jsonl] [--overlap 3] [--items-per-participant 20] [--min-seconds 90] ...

Known items come from a JSONL file (see annotation/known_items.py); ``source_example_id`` is looked
up among the same generator's generations on the dataset.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from annotation.known_items import KnownItemsError
from annotation.selectors.study import known_items_read, regular_generation_ids
from annotation.services import study as study_services
from benchmarks.management.arguments import dataset_ref_argument, generator_argument
from benchmarks.selectors.catalog import DatasetRefError, dataset_resolve
from core.errors import validation_text


class Command(BaseCommand):
    help = "Create an annotation study over a generator's generations on a dataset."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--dataset", required=True, help="name@version (version defaults to v1)"
        )
        parser.add_argument("--generator", required=True)
        parser.add_argument("--limit", type=int, default=200)
        parser.add_argument("--known-items", help="JSONL of attention/training/qualification items")
        parser.add_argument("--overlap", type=int, default=3)
        parser.add_argument("--items-per-participant", type=int, default=20)
        parser.add_argument("--min-seconds", type=int, default=90)
        parser.add_argument("--attention-rate", type=float, default=0.1)
        parser.add_argument("--entry", choices=["prolific", "account", "both"], default="prolific")
        parser.add_argument("--prolific-study-id", default="")
        parser.add_argument(
            "--show-resources",
            action="store_true",
            help="show the procedure's resources on the item page (off: as in the paper, C.1)",
        )
        parser.add_argument(
            "--no-l1-click-through",
            action="store_true",
            help="do not ask participants to click through every L1 step (on by default)",
        )

    def handle(self, *args, **opts):
        ref = dataset_ref_argument(opts["dataset"]).with_default("v1")
        try:
            dataset = dataset_resolve(ref)
        except DatasetRefError as exc:  # with a version given, only "not found" is left
            raise CommandError(f"--dataset {ref}: no such dataset") from exc
        generator = generator_argument(opts["generator"])
        known = self._known_items(opts["known_items"], dataset, generator)
        regular = regular_generation_ids(
            dataset=dataset,
            generator=generator,
            exclude=[k["generation_id"] for k in known],
            limit=opts["limit"],
        )
        if not regular:
            raise CommandError(f"{generator.name} has no generations on {dataset}")
        try:
            study = study_services.study_create(
                name=opts["name"],
                generation_ids=regular,
                known_items=known,
                overlap=opts["overlap"],
                items_per_participant=opts["items_per_participant"],
                min_seconds_per_item=opts["min_seconds"],
                attention_rate=opts["attention_rate"],
                entry=opts["entry"],
                prolific_study_id=opts["prolific_study_id"],
                show_resources=opts["show_resources"],
                click_through_l1=not opts["no_l1_click_through"],
            )
        except ValidationError as exc:
            raise CommandError(validation_text(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Study {study.pk} “{study.name}”: {len(regular)} items, {len(known)} known items. "
                f"Entry: {reverse('annotation:enter', args=[study.slug])} · completion code {study.completion_code}"
            )
        )

    def _known_items(self, path: str | None, dataset, generator) -> list[dict]:
        """The known items of ``--known-items`` with their generation ids (none without it)."""
        if not path:
            return []
        try:
            with open(path, encoding="utf-8") as fh:
                return known_items_read(dataset=dataset, generator=generator, lines=fh, source=path)
        except (OSError, UnicodeDecodeError, KnownItemsError) as exc:
            raise CommandError(str(exc)) from exc
