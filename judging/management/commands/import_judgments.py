"""python manage.py import_judgments FILE --judge NAME --generator NAME [--dataset NAME[@VERSION]]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from benchmarks.management.arguments import import_errors
from judging.services.imports import judgments_import


class Command(BaseCommand):
    help = "Import judgments (reference judgment JSONL) as a judge of backend 'imported'."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--judge", required=True)
        parser.add_argument("--generator", required=True)
        parser.add_argument("--dataset", default=None)

    def handle(self, *args, **opts):
        with import_errors(file=opts["file"], dataset=opts["dataset"]):
            report = judgments_import(
                judge=opts["judge"],
                generator=opts["generator"],
                dataset=opts["dataset"],
                path=opts["file"],
            )
        self.stdout.write(f"{opts['file']}: {report}")
