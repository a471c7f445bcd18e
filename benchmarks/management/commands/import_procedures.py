"""python manage.py import_procedures FILE --dataset NAME [--version V] [--update]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from benchmarks import formats
from benchmarks.management.arguments import dataset_ref_argument, import_errors
from benchmarks.services.imports import procedures_import


class Command(BaseCommand):
    help = (
        "Import procedures from a how2bench.example.v1 (or how2mine export) JSONL file into a dataset, "
        "created if absent. The whole file is validated first; any error refuses it and nothing is written."
    )

    def add_base_argument(self, parser, *args, **kwargs):
        # --version names the dataset version here, not Django's version.
        if "--version" not in args:
            super().add_base_argument(parser, *args, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True, help="dataset name (NAME or NAME@VERSION)")
        parser.add_argument("--version", default=None, help="dataset version (default v1)")
        parser.add_argument(
            "--update", action="store_true", help="replace procedures whose content differs"
        )
        parser.add_argument("--max-errors", type=int, default=formats.DEFAULT_MAX_ERRORS)

    def handle(self, *args, **opts):
        ref = dataset_ref_argument(opts["dataset"], version=opts["version"])
        version = ref.version or "v1"
        with import_errors(file=opts["file"]):
            report = procedures_import(
                dataset=ref.name,
                version=version,
                path=opts["file"],
                update=opts["update"],
                max_errors=opts["max_errors"],
            )
        self.stdout.write(f"procedures into {ref.name}@{version}: {report}")
