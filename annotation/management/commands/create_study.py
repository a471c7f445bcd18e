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

from annotation.known_items import KnownItemsError, parse_known_items
from annotation.services import study as study_services
from benchmarks.models import Dataset, Generation, Generator


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

    def handle(self, *args, **opts):
        name, _, version = opts["dataset"].partition("@")
        dataset = Dataset.objects.filter(name=name, version=version or "v1").first()
        if dataset is None:
            raise CommandError(f"--dataset {opts['dataset']}: no such dataset")
        generator = Generator.objects.filter(name=opts["generator"]).first()
        if generator is None:
            raise CommandError(f"--generator {opts['generator']}: no such generator")
        generations = Generation.objects.filter(procedure__dataset=dataset, generator=generator)
        known = []
        if opts["known_items"]:
            try:
                with open(opts["known_items"], encoding="utf-8") as fh:
                    parsed = parse_known_items(fh, source=opts["known_items"])
            except (OSError, KnownItemsError) as exc:
                raise CommandError(str(exc)) from exc
            by_source = dict(generations.values_list("procedure__source_example_id", "pk"))
            for item in parsed:
                gid = item.get("generation_id") or by_source.get(item.get("source_example_id"))
                if gid is None:
                    raise CommandError(
                        f"{opts['known_items']} line {item['line']}: source_example_id "
                        f"{item['source_example_id']!r} has no generation by {generator.name} on {dataset}"
                    )
                known.append(
                    {
                        "generation_id": gid,
                        "kind": item["kind"],
                        "expected_has_failure": item["expected_has_failure"],
                        "explanation": item["explanation"],
                    }
                )
        known_ids = {k["generation_id"] for k in known}
        regular = [
            g
            for g in generations.order_by("procedure_id").values_list("pk", flat=True)
            if g not in known_ids
        ]
        regular = regular[: opts["limit"]]
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
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Study {study.pk} “{study.name}”: {len(regular)} items, {len(known)} known items. "
                f"Entry: {reverse('annotation:enter', args=[study.slug])} · completion code {study.completion_code}"
            )
        )
