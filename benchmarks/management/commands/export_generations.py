"""python manage.py export_generations --generator NAME [--dataset NAME[@V]] [-o FILE]"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from benchmarks import formats
from benchmarks.models import Dataset, Generator
from benchmarks.selectors.exports import generation_records, write_output
from benchmarks.services.imports import resolve_dataset


class Command(BaseCommand):
    help = "Export a generator's generations as how2bench.generation.v1 JSONL (stdout by default)."

    def add_arguments(self, parser):
        parser.add_argument("--generator", required=True)
        parser.add_argument(
            "--dataset", default=None, help="NAME or NAME@VERSION (default: all datasets)"
        )
        parser.add_argument("-o", "--output", default=None, help="file to write (default stdout)")

    def handle(self, *args, **opts):
        generator = Generator.objects.filter(name=opts["generator"]).first()
        if generator is None:
            raise CommandError(f"--generator: no generator named {opts['generator']!r}")
        dataset = None
        if opts["dataset"]:
            name, version = formats.split_dataset_spec(opts["dataset"])
            try:
                dataset = resolve_dataset(name=name, version=version)
            except (Dataset.DoesNotExist, Dataset.MultipleObjectsReturned) as exc:
                raise CommandError(f"--dataset {opts['dataset']}: {exc}") from exc
        n = write_output(
            generation_records(generator=generator, dataset=dataset),
            stdout=self.stdout,
            output=opts["output"],
        )
        self.stderr.write(f"exported {n} generations of {generator.name}")
