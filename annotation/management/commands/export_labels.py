"""``manage.py export_labels --study ID --format csv|jsonl [--output FILE] [--gold --kind K --key K]``

Per-item labels of a study's regular items (each annotator's label, the majority with ties
explicit, the adjudicated label), or with ``--gold`` the adjudicated labels as known-answer
items that ``create_study --known-items`` reads back.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Study
from annotation.selectors import exports
from core.streaming import export_lines, write_lines


class Command(BaseCommand):
    help = "Export a study's per-item labels (or its adjudicated gold set) as CSV or JSONL."

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, required=True, help="study id")
        parser.add_argument("--format", choices=("csv", "jsonl"), default="jsonl")
        parser.add_argument("--output", help="file to write (default: standard output)")
        parser.add_argument("--gold", action="store_true", help="the adjudicated gold set instead")
        parser.add_argument("--kind", choices=exports.GOLD_KINDS, default="qualification")
        parser.add_argument("--key", choices=exports.GOLD_KEYS, default="generation_id")

    def handle(self, *args, **opts):
        study = Study.objects.filter(pk=opts["study"]).first()
        if study is None:
            raise CommandError(f"--study {opts['study']}: no such study")
        if opts["gold"]:
            rows = exports.study_gold_rows(study=study, kind=opts["kind"], key=opts["key"])
            fields = exports.gold_fields(key=opts["key"])
        else:
            rows = exports.study_item_label_rows(study=study)
            fields = exports.ITEM_EXPORT_FIELDS
        lines = export_lines(rows, fields=fields, fmt=opts["format"])
        if not opts["output"]:
            write_lines(lines, stdout=self.stdout)
            return
        try:
            n = write_lines(lines, stdout=self.stdout, output=opts["output"])
        except OSError as exc:
            raise CommandError(f"--output {opts['output']}: {exc.strerror or exc}") from exc
        n -= 1 if opts["format"] == "csv" else 0  # the header line
        self.stderr.write(f"{n} rows written to {opts['output']}")
