"""python manage.py import_procedures FILE --dataset NAME [--version V] [--update]"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from benchmarks import formats
from benchmarks.services.imports import ImportRefused, procedures_import


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
        name, version = formats.split_dataset_spec(opts["dataset"])
        version = opts["version"] or version or "v1"
        try:
            report = procedures_import(
                dataset=name,
                version=version,
                path=opts["file"],
                update=opts["update"],
                max_errors=opts["max_errors"],
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(f"cannot read {opts['file']}: {exc.strerror or exc}") from exc
        self.stdout.write(f"procedures into {name}@{version}: {report}")
