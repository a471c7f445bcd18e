"""python manage.py import_pack PACK FILE --dataset NAME[@V] [--generator NAME] [--update]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from benchmarks import formats
from benchmarks.management.arguments import dataset_ref_argument, import_errors
from benchmarks.services.pack_imports import pack_import


class Command(BaseCommand):
    help = (
        "Import a scorer pack's own JSONL shape (procbench, scirecipe, customplans, longproc-*; "
        "the record shape of `manage.py score PACK`) as a dataset's items and, with --generator, "
        "that generator's outputs. The whole file is validated by the pack first; any error "
        "refuses it."
    )

    def add_arguments(self, parser):
        parser.add_argument("pack", help="scorer pack name, e.g. procbench")
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True, help="NAME or NAME@VERSION (default v1)")
        parser.add_argument(
            "--generator", default=None, help="import the lines' outputs as this generator's"
        )
        parser.add_argument(
            "--update", action="store_true", help="replace items or outputs whose content differs"
        )
        parser.add_argument("--max-errors", type=int, default=formats.DEFAULT_MAX_ERRORS)

    def handle(self, *args, **opts):
        ref = dataset_ref_argument(opts["dataset"])
        with import_errors(file=opts["file"], dataset=opts["dataset"]):
            items, outputs = pack_import(
                pack=opts["pack"],
                dataset=ref.name,
                version=ref.version or "v1",
                generator=opts["generator"],
                path=opts["file"],
                update=opts["update"],
                max_errors=opts["max_errors"],
            )
        self.stdout.write(f"items of {ref.name}@{ref.version or 'v1'}: {items}")
        if outputs is not None:
            self.stdout.write(f"outputs of {opts['generator']}: {outputs}")
