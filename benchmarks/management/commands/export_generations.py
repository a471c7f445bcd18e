"""python manage.py export_generations --generator NAME [--dataset NAME[@V]] [-o FILE]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from benchmarks.management.arguments import dataset_argument, generator_argument
from benchmarks.selectors.exports import generation_records
from core.streaming import jsonl_lines, write_lines


class Command(BaseCommand):
    help = "Export a generator's generations as how2bench.generation.v1 JSONL (stdout by default)."

    def add_arguments(self, parser):
        parser.add_argument("--generator", required=True)
        parser.add_argument(
            "--dataset", default=None, help="NAME or NAME@VERSION (default: all datasets)"
        )
        parser.add_argument("-o", "--output", default=None, help="file to write (default stdout)")

    def handle(self, *args, **opts):
        generator = generator_argument(opts["generator"])
        dataset = dataset_argument(opts["dataset"]) if opts["dataset"] else None
        records = generation_records(generator=generator, dataset=dataset)
        n = write_lines(jsonl_lines(records), stdout=self.stdout, output=opts["output"])
        self.stderr.write(f"exported {n} generations of {generator.name}")
