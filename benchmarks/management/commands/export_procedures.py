"""python manage.py export_procedures --dataset NAME [--version V] [-o FILE]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from benchmarks.management.arguments import dataset_argument, dataset_ref_argument
from benchmarks.selectors.exports import procedure_records
from core.streaming import jsonl_lines, write_lines


class Command(BaseCommand):
    help = "Export a dataset's procedures as how2bench.example.v1 JSONL (stdout by default)."

    def add_base_argument(self, parser, *args, **kwargs):
        # --version names the dataset version here, not Django's version.
        if "--version" not in args:
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="NAME or NAME@VERSION")
        parser.add_argument(
            "--version", default=None, help="dataset version (default: its only version)"
        )
        parser.add_argument("-o", "--output", default=None, help="file to write (default stdout)")

    def handle(self, *args, **opts):
        dataset = dataset_argument(dataset_ref_argument(opts["dataset"], version=opts["version"]))
        records = procedure_records(dataset=dataset)
        n = write_lines(jsonl_lines(records), stdout=self.stdout, output=opts["output"])
        self.stderr.write(f"exported {n} procedures of {dataset}")
