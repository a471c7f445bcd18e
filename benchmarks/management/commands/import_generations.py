"""python manage.py import_generations FILE --generator NAME [--dataset NAME[@V]] [--update]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from benchmarks import formats
from benchmarks.management.arguments import import_errors
from benchmarks.services.imports import generations_import


class Command(BaseCommand):
    help = (
        "Import generations from a how2bench.generation.v1 JSONL file for a generator (created if absent), "
        "matched to procedures by source_example_id. The whole file is validated first; any error refuses it."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--generator", required=True, help="generator name")
        parser.add_argument(
            "--dataset", default=None, help="NAME or NAME@VERSION to match procedures in"
        )
        parser.add_argument(
            "--update", action="store_true", help="replace generations whose content differs"
        )
        parser.add_argument("--max-errors", type=int, default=formats.DEFAULT_MAX_ERRORS)

    def handle(self, *args, **opts):
        with import_errors(file=opts["file"], dataset=opts["dataset"]):
            report = generations_import(
                generator=opts["generator"],
                dataset=opts["dataset"],
                path=opts["file"],
                update=opts["update"],
                max_errors=opts["max_errors"],
            )
        self.stdout.write(f"generations of {opts['generator']}: {report}")
